import { type HttpServerRequest, HttpServerResponse } from "@effect/platform"
import { Clock, Context, Effect, Layer, Option, ParseResult, Schema } from "effect"
import { CallRequest, CallResult } from "../../Domain/GatewayCall.js"
import { amountOf } from "../../Domain/Money.js"
import { ExecuteRequest, ExecuteResult } from "../../Domain/Purchasing.js"
import { type AnyApiError, InvalidInput, PaymentRequired } from "../../Errors/ApiErrors.js"
import { encodeApiError } from "../../Errors/Wire.js"
import { Gateway } from "../../Services/Gateway/Gateway.js"
import { PublicUrl } from "../../Services/PublicUrl.js"
import { PayerPurchases } from "../../Services/Purchasing/PayerPurchases.js"
import { Facilitator } from "../../Services/X402/Facilitator.js"
import { FacilitatorAddressLive } from "../../Services/X402/FacilitatorAddressLive.js"
import { unitsOf, X402Config } from "../../Services/X402/X402Config.js"
import { X402Payments } from "../../Services/X402/X402Payments.js"
import { X402Repo } from "../../Services/X402/X402Repo.js"
import { X402SweeperLive } from "../../Services/X402/X402Sweeper.js"

/**
 * `POST /v1/call` and `POST /v1/execute` for callers without a key, when X402_ENABLED is on
 * (docs/x402-and-signatures.md, "Taking payments (x402)"). The edge hands a request here
 * only when it carries no `Authorization` header at all, so a keyed request never reaches
 * it and pays nothing for it; with x402 off this is `none` and the edge asks nothing.
 *
 * - No `PAYMENT-SIGNATURE`: 402 `payment_required` with `PAYMENT-REQUIRED` (the call's
 *   price, or the purchase's maximum, in the asset's units).
 * - With one: the payment is verified, the work done and what is due settled
 *   (X402Payments.ts); the answer is the one a keyed caller gets, with `record` (the signed
 *   record naming the payer) and `PAYMENT-RESPONSE` when something was settled.
 * - A payment refused: 402 `payment_invalid`, with `PAYMENT-REQUIRED` again.
 */
export type X402Handler = (
  request: HttpServerRequest.HttpServerRequest,
  route: "call" | "execute"
) => Effect.Effect<HttpServerResponse.HttpServerResponse>

export class X402Requests extends Context.Tag("Http/X402Requests")<X402Requests, Option.Option<X402Handler>>() {}

/** The x402 routes: only `POST` of these two paths, with no Authorization header. */
export const x402RouteOf = (method: string, pathname: string, headers: Readonly<Record<string, string>>) => {
  if (method !== "POST" || headers["authorization"] !== undefined) return null
  return pathname === "/v1/call" ? "call" as const : pathname === "/v1/execute" ? "execute" as const : null
}

const decodeBody = <A, I>(schema: Schema.Schema<A, I>, text: string) =>
  Effect.try({
    try: () => JSON.parse(text === "" ? "{}" : text) as unknown,
    catch: () => new InvalidInput({ message: "Malformed JSON body" })
  }).pipe(
    Effect.flatMap((value) =>
      Effect.mapError(Schema.decodeUnknown(schema)(value), (error) => {
        const first = ParseResult.ArrayFormatter.formatErrorSync(error)[0]
        const field = first === undefined || first.path.length === 0 ? "body" : first.path.map(String).join(".")
        return new InvalidInput({ message: `Invalid value for \`${field}\`: ${first?.message ?? "not as expected"}` })
      })
    )
  )

const encodeCallResult = Schema.encode(CallResult)
const encodeExecuteResult = Schema.encode(ExecuteResult)

const makeHandler = Effect.gen(function*() {
  const config = yield* X402Config
  const payments = yield* X402Payments
  const gateway = yield* Gateway
  const purchases = yield* PayerPurchases
  const baseUrl = yield* PublicUrl

  // A paid answer is the payer's alone, and a price may change: nothing of it is cached.
  const json = (status: number, body: unknown) =>
    HttpServerResponse.unsafeJson(body, { status, headers: { "cache-control": "no-store" } })

  /**
   * When a payer's limit lets it in again: the per-minute windows are aligned to the clock's
   * minutes, the spend cap to UTC days.
   */
  const retryAfter = (error: AnyApiError) =>
    Effect.map(Clock.currentTimeMillis, (now) => {
      const window = error._tag === "rate_limited" ? 60_000 : error._tag === "payer_spend_cap" ? 86_400_000 : null
      return window === null ? null : String(Math.max(1, Math.ceil((window - (now % window)) / 1000)))
    })

  /** Our error as the catalogue answers it; a refused or missing payment carries what would be taken. */
  const errorAnswer = (error: AnyApiError, requirementsHeader: string | null) =>
    Effect.zipWith(encodeApiError(error), retryAfter(error), ({ body, status }, wait) => {
      const response = json(status, body)
      const waited = wait === null ? response : HttpServerResponse.setHeader(response, "retry-after", wait)
      return requirementsHeader === null ? waited : HttpServerResponse.setHeader(
        waited,
        "payment-required",
        requirementsHeader
      )
    })

  /** Prices the request, asks for a payment or takes it. */
  const serve = (
    request: HttpServerRequest.HttpServerRequest,
    priced: {
      readonly kind: "call" | "purchase"
      readonly scheme: "exact" | "upto"
      readonly credits: bigint
      readonly subject: string
      readonly description: string
      readonly body: unknown
      readonly work: Parameters<typeof payments.pay>[0]["work"]
    }
  ) =>
    Effect.gen(function*() {
      const units = unitsOf(priced.credits, config)
      const required = yield* payments.requirementsFor(priced.scheme, units)
      const resource = { url: `${baseUrl}${request.url.split("?", 1)[0]}`, description: priced.description }
      const signature = request.headers["payment-signature"]
      if (signature === undefined || signature.trim() === "") {
        const message = `Pay ${units} units of ${config.asset} on ${config.network} (${priced.credits} credits) ` +
          "as PAYMENT-REQUIRED says, or send an agent key"
        return yield* errorAnswer(new PaymentRequired({ message }), payments.paymentRequired(required, resource))
      }
      return yield* payments.pay({
        kind: priced.kind,
        scheme: priced.scheme,
        priceCredits: priced.credits,
        units,
        subject: priced.subject,
        request: priced.body,
        signature,
        work: priced.work
      }).pipe(
        Effect.map((answer) => {
          const response = json(answer.status, answer.body)
          return answer.paymentResponse === null
            ? response
            : HttpServerResponse.setHeader(response, "payment-response", answer.paymentResponse)
        }),
        Effect.catchTag("payment_invalid", (error) =>
          errorAnswer(error, payments.paymentRequired(required, resource, error.message)))
      )
    })

  const call = (request: HttpServerRequest.HttpServerRequest, text: string) =>
    Effect.gen(function*() {
      const input = yield* decodeBody(CallRequest, text)
      const prepared = yield* gateway.quote(input)
      return yield* serve(request, {
        kind: "call",
        scheme: "exact",
        credits: prepared.price,
        subject: prepared.endpoint.id,
        description: `One call of ${prepared.endpoint.id}, charged only when the provider answers`,
        body: input,
        work: (paymentId) =>
          Effect.gen(function*() {
            const made = yield* gateway.callForPayer(prepared, paymentId)
            const succeeded = made.result.status === "succeeded"
            return {
              dueUnits: succeeded ? unitsOf(prepared.price, config) : 0n,
              answer: {
                status: 200,
                body: yield* Effect.orDie(encodeCallResult(made.result)),
                // The call record as keyed callers read it (GET /v1/orgs/{orgId}/calls), the payer
                // named in place of the agent when it is answered.
                record: {
                  id: made.result.call_id,
                  endpoint: made.result.endpoint,
                  provider: made.result.provider,
                  mode: "live",
                  status: made.result.status,
                  price: made.result.price,
                  charged: made.result.charged,
                  refunded: made.result.refunded ?? null,
                  provider_status: made.result.provider_status,
                  latency_ms: made.result.latency_ms,
                  created_at: made.startedAt.toISOString(),
                  finished_at: made.finishedAt.toISOString(),
                  request_hash: made.requestSha256,
                  response_hash: made.responseSha256
                }
              }
            }
          })
      })
    })

  const execute = (request: HttpServerRequest.HttpServerRequest, text: string) =>
    Effect.gen(function*() {
      const input = yield* decodeBody(ExecuteRequest, text)
      const quoted = yield* purchases.quote(input)
      const tool = quoted.context.tool
      return yield* serve(request, {
        kind: "purchase",
        scheme: "upto",
        credits: quoted.terms.amount,
        subject: tool.slug,
        description: `Up to ${quoted.terms.count} results of ${tool.slug}, charged only for those that pass its check`,
        body: input,
        work: () =>
          Effect.gen(function*() {
            const ran = yield* purchases.run(quoted)
            const answer = ran.answer
            const encoded = answer._tag === "Left"
              ? yield* encodeApiError(answer.left)
              : "_tag" in answer.right
              ? yield* encodeApiError(answer.right)
              : { status: 200, body: yield* Effect.orDie(encodeExecuteResult(answer.right)) }
            return {
              dueUnits: unitsOf(ran.charged, config),
              answer: {
                status: encoded.status,
                body: encoded.body,
                // The purchase's receipt: the tool, each item's outcome with its input and result
                // hashes and check, and what was charged.
                record: {
                  id: quoted.context.receiptId,
                  mode: "live",
                  tool: { id: tool.id, slug: tool.slug, name: tool.name, provider: tool.provider },
                  item_count: quoted.terms.count,
                  price_per_item: amountOf(quoted.terms.price),
                  charged: amountOf(ran.charged),
                  items: ran.items.map((item) => ({ ...item, cost_credits: item.cost_credits.toString() })),
                  created_at: ran.startedAt.toISOString(),
                  finished_at: ran.finishedAt.toISOString()
                }
              }
            }
          })
      })
    })

  const handler: X402Handler = (request, route) =>
    Effect.flatMap(
      Effect.orDie(request.text),
      (text): Effect.Effect<HttpServerResponse.HttpServerResponse, AnyApiError> =>
        route === "call" ? call(request, text) : execute(request, text)
    ).pipe(Effect.catchAll((error) => errorAnswer(error, null)))
  return handler
})

/** The handler when X402_ENABLED is on (with its facilitator, payments and sweeper); none otherwise. */
export const X402RequestsLive = Layer.unwrapEffect(Effect.map(X402Config, (config) =>
  config.enabled
    ? Layer.effect(X402Requests, Effect.map(makeHandler, Option.some)).pipe(
      Layer.provideMerge(X402SweeperLive),
      Layer.provideMerge(X402Payments.Default),
      Layer.provideMerge(X402Repo.Default),
      Layer.provideMerge(PayerPurchases.Default),
      Layer.provideMerge(Facilitator.Default),
      Layer.provideMerge(FacilitatorAddressLive)
    )
    : Layer.succeed(X402Requests, Option.none()))).pipe(Layer.provide(X402Config.Default))
