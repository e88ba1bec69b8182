import { HttpClient, HttpClientError, HttpClientRequest, type HttpClientResponse } from "@effect/platform"
import type { PaymentPayload, PaymentRequired } from "@x402/core/types"
import { Effect, FiberRef } from "effect"
import { clientError, ServiceError } from "./errors.js"

/**
 * Paying per request with x402 (v2), for a caller without a key: when the service answers 402
 * with `PAYMENT-REQUIRED`, the payer's wallet signs the payment it asks for (`exact`, or `upto`
 * for a purchase's maximum) with the x402 client (`@x402/core` and `@x402/evm`'s schemes), and
 * the same request is sent once more with `PAYMENT-SIGNATURE`. The payment carries the x402
 * `payment-identifier` extension, equal to the request's idempotency key, so a retry of a paid
 * request answers the first result instead of paying twice. The service's `PAYMENT-RESPONSE`
 * (the settlement) is decoded for the caller.
 */

/*
 * The types the client's users see are its own, of the shapes the x402 libraries take and give:
 * the client's declarations then name no module of theirs (whose declarations need Node's types).
 */

/**
 * A wallet that signs payments (`@x402/evm`'s `ClientEvmSigner`): a viem account
 * (`privateKeyToAccount(...)`), or anything that signs EIP-712 typed data for its address.
 */
export interface Payer {
  readonly address: `0x${string}`
  signTypedData(message: {
    domain: Record<string, unknown>
    types: Record<string, unknown>
    primaryType: string
    message: Record<string, unknown>
  }): Promise<`0x${string}`>
}

/**
 * What the payer will sign (`@x402/core`'s `SpendControls`): at most `maxAmountPerPayment` a
 * payment (dollars, e.g. "$5"; default "$1"; `false`: no cap) in the stablecoins `@x402/evm`
 * knows, plus `allowedAssets` (`true`: any token).
 */
export interface PaymentLimits {
  readonly maxAmountPerPayment?: string | number | false
  readonly allowedAssets?:
    | true
    | ReadonlyArray<
      { readonly network: `${string}:${string}`; readonly asset: string; readonly maxAmountPerPayment?: string }
    >
}

/** The settlement the service reported in `PAYMENT-RESPONSE` (`@x402/core`'s `SettleResponse`). */
export interface PaymentResponse {
  readonly success: boolean
  /** The settlement's transaction hash ("" when nothing moved, as an `upto` settled at 0). */
  readonly transaction: string
  /** CAIP-2, e.g. `eip155:84532`. */
  readonly network: string
  readonly payer?: string
  /** What was settled, in the token's smallest units (an `upto` payment's actual amount). */
  readonly amount?: string
  readonly errorReason?: string
  readonly errorMessage?: string
  readonly extensions?: Record<string, unknown>
}

/** A paid answer: the answer, and the settlement of its payment. */
export type Paid<A> = A & { readonly payment?: PaymentResponse }

/**
 * What one call's tries share: the payment-identifier they all carry, and the settlement the
 * last paid try was answered with. Each call puts a fresh holder in this FiberRef.
 */
export interface PaymentSeen {
  identifier: string | null
  response: PaymentResponse | null
}
export const paymentSeen = FiberRef.unsafeMake<PaymentSeen>({ identifier: null, response: null })

/**
 * A `payment-identifier` must be 16 to 128 letters, digits, `-` or `_` (the extension's
 * `isValidPaymentId`, checked here without loading it); the client's own idempotency keys are.
 * A key of the caller's that is not is refused before anything is sent, rather than paid for
 * without one.
 */
export const checkPaymentIdentifier = (id: string) => {
  if (!/^[A-Za-z0-9_-]{16,128}$/.test(id)) {
    throw new RangeError(
      `A paying client's idempotency_key is its x402 payment-identifier: 16 to 128 letters, digits, "-" or "_", not "${id}"`
    )
  }
  return id
}

/**
 * The x402 client for `payer`, loaded on the first payment: its libraries (with viem) take
 * about a second to import, which a client that never pays should not spend at start.
 */
const loadWallet = async (payer: Payer, limits: PaymentLimits | false | undefined) => {
  const [{ x402Client, x402HTTPClient }, { decodePaymentResponseHeader }, { ExactEvmScheme }, { UptoEvmScheme }, ids] =
    await Promise.all([
      import("@x402/core/client"),
      import("@x402/core/http"),
      import("@x402/evm/exact/client"),
      import("@x402/evm/upto/client"),
      import("@x402/extensions/payment-identifier")
    ])
  const x402 = new x402Client()
    .register("eip155:*", new ExactEvmScheme(payer))
    .register("eip155:*", new UptoEvmScheme(payer))
  if (limits === false) x402.setSpendControls(false)
  else if (limits !== undefined) {
    const { allowedAssets, maxAmountPerPayment } = limits
    x402.setSpendControls({
      ...(maxAmountPerPayment === undefined ? {} : { maxAmountPerPayment }),
      ...(allowedAssets === undefined
        ? {}
        : { allowedAssets: allowedAssets === true ? true : allowedAssets.map((a) => ({ ...a })) })
    })
  }
  const http = new x402HTTPClient(x402)

  /** The payment the service asks for, with this call's identifier added to its extensions. */
  const withIdentifier = (required: PaymentRequired, id: string): PaymentRequired => {
    const declared = required.extensions?.[ids.PAYMENT_IDENTIFIER]
    const extensions = {
      ...required.extensions,
      [ids.PAYMENT_IDENTIFIER]: structuredClone(declared ?? ids.declarePaymentIdentifierExtension(false))
    }
    return { ...required, extensions: ids.appendPaymentIdentifierToExtensions(extensions, id) }
  }

  return {
    /** The `PAYMENT-SIGNATURE` headers paying what `getHeader`'s `PAYMENT-REQUIRED` asks. */
    pay: async (getHeader: (name: string) => string | undefined, id: string) => {
      const payload: PaymentPayload = await http.createPaymentPayload(
        withIdentifier(http.getPaymentRequiredResponse(getHeader), id)
      )
      return http.encodePaymentSignatureHeader(payload)
    },
    settlement: (value: string): PaymentResponse => decodePaymentResponseHeader(value)
  }
}

const header = (response: HttpClientResponse.HttpClientResponse, name: string) => response.headers[name.toLowerCase()]

/** A failure to pay, carried through the HTTP client as the error the caller gets. */
const paymentFailed = (request: HttpClientRequest.HttpClientRequest, message: string) =>
  new HttpClientError.RequestError({
    request,
    reason: "Transport",
    cause: clientError("payment_failed", message),
    description: message
  })

/**
 * Wraps `client` so a 402 answer with `PAYMENT-REQUIRED` is paid by `payer` and the request
 * sent once more; any other answer passes through. `newIdentifier` makes the identifier of a
 * call that brought none (kept for all its tries).
 */
export const payingClient = (
  client: HttpClient.HttpClient,
  payer: Payer,
  options: { readonly spendControls?: PaymentLimits | false | undefined; readonly newIdentifier: () => string }
): HttpClient.HttpClient => {
  let wallet: ReturnType<typeof loadWallet> | undefined

  return HttpClient.transform(client, (answer, request) =>
    Effect.flatMap(answer, (response) => {
      if (response.status !== 402 || header(response, "payment-required") === undefined) return Effect.succeed(response)
      return Effect.gen(function*() {
        const seen = yield* FiberRef.get(paymentSeen)
        seen.identifier ??= options.newIdentifier()
        const id = seen.identifier
        const loaded = yield* Effect.tryPromise({
          try: () => (wallet ??= loadWallet(payer, options.spendControls)),
          catch: (error) => paymentFailed(request, `Could not load the x402 client: ${String(error)}`)
        })
        const signature = yield* Effect.tryPromise({
          try: () => loaded.pay((name) => header(response, name), id),
          catch: (error) =>
            paymentFailed(
              request,
              `Could not pay as the service asked: ${error instanceof Error ? error.message : String(error)}`
            )
        })
        // The 402's body is read to its end, so its connection is free for the paid request.
        yield* Effect.ignore(response.text)
        const paid = yield* client.execute(HttpClientRequest.setHeaders(request, signature))
        const settled = header(paid, "payment-response")
        // A settlement header that does not decode leaves `payment` out; the answer still stands.
        seen.response = settled === undefined
          ? null
          : yield* Effect.orElseSucceed(Effect.try(() => loaded.settlement(settled)), () => null)
        return paid
      })
    }))
}

/** The client's error a failed payment was carried in, if `error` is one. */
export const paymentFailure = (error: unknown): ServiceError | undefined => {
  const cause = error as { _tag?: unknown; cause?: unknown } | null
  return cause?._tag === "RequestError" && cause.cause instanceof ServiceError ? cause.cause : undefined
}
