import { Schema } from "effect"
import { AnyJson } from "./Json.js"
import { Amount } from "./Money.js"

/**
 * What a gateway call asks for: the same shape for `POST /v1/call`, the MCP `call_endpoint`
 * tool and the gateway service, decoded at the edge of each entry point.
 */
const ParamObject = Schema.Record({ key: Schema.String, value: AnyJson })

export const CallRequest = Schema.Struct({
  endpoint: Schema.String.pipe(Schema.minLength(1, { message: () => "`endpoint` is required" })).annotations({
    description: "Endpoint id, `<provider>/<endpoint_slug>`"
  }),
  query: Schema.optional(ParamObject.annotations({ description: "Query parameters, passed to the provider" })),
  body: Schema.optional(ParamObject.annotations({ description: "JSON body, passed to the provider (not for GET)" })),
  path_params: Schema.optional(
    ParamObject.annotations({ description: "One value per `{name}` placeholder of the endpoint's path" })
  ),
  max_price: Schema.optional(
    Schema.Number.pipe(Schema.nonNegative({ message: () => "`max_price` must be a number of credits, zero or more" }))
      .annotations({ description: "Refuse the call if it costs more credits" })
  )
}).annotations({ identifier: "CallRequest" })

export type CallRequest = typeof CallRequest.Type

/** What a gateway call answers: the same shape for `POST /v1/call`, the MCP tool and the gateway service. */
export const CallOutcome = Schema.Literal("succeeded", "refused", "failed", "timed_out", "test").annotations({
  description: "succeeded: answered and charged; refused: provider 4xx; failed: provider 5xx or network error; " +
    "timed_out: no answer within 60 s; test: a test key, checked and priced but not made"
})

export const Refunded = Schema.Struct({
  credits: Schema.String,
  usd: Schema.String,
  reason: Schema.Literal(
    "provider_refused",
    "provider_error",
    "timeout",
    "lower_cost_reported",
    "hold_expired",
    "abandoned"
  )
}).annotations({ identifier: "Refunded", description: "Present when the hold was released in whole or in part" })

export const CallResult = Schema.Struct({
  call_id: Schema.String,
  endpoint: Schema.String,
  provider: Schema.String,
  status: CallOutcome,
  price: Amount,
  charged: Amount,
  latency_ms: Schema.Int,
  provider_status: Schema.NullOr(Schema.Int),
  data: AnyJson.annotations({
    description: "The provider's own answer (JSON, or text when it is not JSON); with a test key, the sandbox's sample"
  }),
  refunded: Schema.optional(Refunded),
  sample: Schema.optional(Schema.Literal(true)).annotations({
    description: "Present with a test key: the call was checked and priced, not made, and `data` is a sample"
  })
}).annotations({ identifier: "CallResult" })
export type CallResult = typeof CallResult.Type
export type RefundReason = typeof Refunded.Type["reason"]
