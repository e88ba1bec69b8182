import { type FacilitatorClient, HTTPFacilitatorClient, x402ResourceServer } from "@x402/core/server"
import {
  type PaymentPayload,
  type PaymentRequirements,
  SettleError,
  type SettleResponse,
  VerifyError
} from "@x402/core/types"
import { ExactEvmScheme } from "@x402/evm/exact/server"
import { UptoEvmScheme } from "@x402/evm/upto/server"
import { Context, Effect, Ref } from "effect"
import { PaymentInvalid, PaymentUnavailable } from "../../Errors/ApiErrors.js"
import { X402Config } from "./X402Config.js"

/** Where the facilitator answers: X402_FACILITATOR_URL, or the emulator started in development. */
export class FacilitatorAddress extends Context.Tag("X402/FacilitatorAddress")<
  FacilitatorAddress,
  { readonly url: string; readonly emulated: boolean }
>() {}

export type PaymentScheme = "exact" | "upto"

/** What a facilitator said when it refused a payment, for the payer and the records. */
const refusalMessage = (what: string, reason: string | undefined, message: string | undefined) =>
  `The facilitator refused the payment's ${what}: ${reason ?? "invalid"}${message ? ` (${message})` : ""}`

/**
 * The facilitator as the service speaks to it, through `@x402/core`: the requirements of a
 * price (the resource server builds them, with what the facilitator supports, e.g. the
 * `upto` scheme's facilitator address), `/verify` and `/settle`. A refusal is
 * `payment_invalid` with the facilitator's reason; no answer, or one that cannot be read,
 * is `payment_unavailable` (for a settlement: not known to have happened, so not recorded
 * as done).
 */
export class Facilitator extends Effect.Service<Facilitator>()("X402/Facilitator", {
  effect: Effect.gen(function*() {
    const config = yield* X402Config
    const address = yield* FacilitatorAddress
    const client: FacilitatorClient = new HTTPFacilitatorClient({
      url: address.url,
      timeoutMs: config.facilitatorTimeoutMs
    })
    const server = new x402ResourceServer(client)
      .register(config.network, new ExactEvmScheme())
      .register(config.network, new UptoEvmScheme())

    // What the facilitator supports is asked once it is first needed (not at start: a
    // facilitator down then must not stop the service), and again after a failed ask.
    const initialised = yield* Ref.make(false)
    const unavailable = (what: string) => (cause: unknown) =>
      new PaymentUnavailable({
        message: `The payment facilitator did not answer the ${what} (${
          cause instanceof Error ? cause.message : String(cause)
        }); retry shortly`
      })
    const ready = Effect.flatMap(Ref.get(initialised), (done) =>
      done ? Effect.void : Effect.tryPromise({
        try: () => server.initialize(),
        catch: unavailable("question of what it supports")
      }).pipe(Effect.zipRight(Ref.set(initialised, true))))

    /** The requirements to pay `units` of the asset under `scheme` (for `upto`, the most that may be settled). */
    const requirements = (scheme: PaymentScheme, units: bigint) =>
      Effect.flatMap(ready, () =>
        Effect.tryPromise({
          try: () =>
            server.buildPaymentRequirements({
              scheme,
              payTo: config.payTo,
              network: config.network,
              maxTimeoutSeconds: config.maxTimeoutSeconds,
              price: {
                asset: config.asset,
                amount: units.toString(),
                extra: { name: config.assetName, version: config.assetVersion }
              }
            }),
          catch: unavailable("building of payment requirements")
        })).pipe(
          Effect.flatMap((built) =>
            built[0] === undefined
              ? Effect.fail(unavailable("payment requirements")(`no ${scheme} payments on ${config.network}`))
              : Effect.succeed(built[0])
          )
        )

    /** `/verify`: the payer's address when the facilitator accepts the payment for these requirements. */
    const verify = (payload: PaymentPayload, required: PaymentRequirements) =>
      Effect.tryPromise({
        try: () => client.verify(payload, required),
        catch: (cause) =>
          cause instanceof VerifyError
            ? new PaymentInvalid({ message: refusalMessage("verification", cause.invalidReason, cause.invalidMessage) })
            : unavailable("verification")(cause)
      }).pipe(
        Effect.flatMap((answer) =>
          answer.isValid && typeof answer.payer === "string"
            ? Effect.succeed({ payer: answer.payer.toLowerCase() })
            : Effect.fail(
              new PaymentInvalid({
                message: refusalMessage("verification", answer.invalidReason, answer.invalidMessage)
              })
            )
        )
      )

    /** `/settle` of `units` (for `exact`, the whole amount; for `upto`, what is due, 0 allowed). */
    const settle = (payload: PaymentPayload, required: PaymentRequirements, units: bigint) =>
      Effect.tryPromise({
        try: (): Promise<SettleResponse> => client.settle(payload, { ...required, amount: units.toString() }),
        catch: (cause) =>
          cause instanceof SettleError
            ? new PaymentInvalid({ message: refusalMessage("settlement", cause.errorReason, cause.errorMessage) })
            : unavailable("settlement")(cause)
      }).pipe(
        Effect.flatMap((answer) =>
          answer.success
            ? Effect.succeed(answer)
            : Effect.fail(
              new PaymentInvalid({ message: refusalMessage("settlement", answer.errorReason, answer.errorMessage) })
            )
        )
      )

    return { requirements, verify, settle, url: address.url, emulated: address.emulated } as const
  })
}) {}
