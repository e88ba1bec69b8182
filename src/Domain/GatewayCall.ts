import { Model } from "@effect/sql"
import { Schema } from "effect"
import { AgentId, CallId, HoldId, OrgId } from "./Ids.js"
import { AnyJson } from "./Json.js"
import { Amount, AmountFromCredits, amountOf } from "./Money.js"
import { PayerRecord } from "./PayerRecord.js"
import { TimestampColumn, TimestampFromDate } from "./Timestamps.js"

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
  }),
  record: Schema.optional(PayerRecord)
}).annotations({ identifier: "CallResult" })
export type CallResult = typeof CallResult.Type
export const RefundReason = Refunded.fields.reason
export type RefundReason = typeof RefundReason.Type

/** A call's state in the call list: the outcomes, `pending` (in flight) and `abandoned` (left by a crash). */
export const CallStatus = Schema.Literal("pending", "succeeded", "refused", "failed", "timed_out", "test", "abandoned")
export type CallStatus = typeof CallStatus.Type

/** A column the wire shows under another name. */
const onWireAs = <S extends Schema.Schema.Any>(schema: S, key: string) =>
  Model.Field({
    select: schema,
    insert: schema,
    json: Schema.propertySignature(schema).pipe(Schema.fromKey(key))
  })

/** Credits the wire shows as the amount object under another name. */
const creditsOnWireAs = (key: string) =>
  Model.Field({
    select: Schema.BigInt,
    insert: Schema.BigInt,
    json: Schema.propertySignature(AmountFromCredits).pipe(Schema.fromKey(key))
  })

/** Columns written later, by the settlement: read, never inserted, not on the wire as they are. */
const settledOnly = <S extends Schema.Schema.Any>(schema: S) => Model.FieldOnly("select")(schema)

/**
 * A gateway call as the call log keeps it (never the request's or the answer's contents,
 * only their hashes), declared once: `GatewayCall` decodes its row, `GatewayCall.insert` is
 * the row a call writes (pending with its hold, or finished for a test key), and
 * `GatewayCall.json` is the wire record's columns (`CallRecord` adds the refund, which the
 * row keeps in two columns, and the signature).
 */
export class GatewayCall extends Model.Class<GatewayCall>("GatewayCall")({
  id: Model.GeneratedByApp(CallId),
  org_id: Model.FieldExcept("json", "jsonCreate", "jsonUpdate", "update")(OrgId),
  agent_id: Model.FieldExcept("jsonCreate", "jsonUpdate", "update")(AgentId),
  endpoint_id: onWireAs(Schema.String, "endpoint"),
  provider_id: onWireAs(Schema.String, "provider"),
  mode: Model.FieldExcept("jsonCreate", "jsonUpdate", "update")(Schema.Literal("test", "live")),
  status: Model.FieldExcept("jsonCreate", "jsonUpdate", "update")(CallStatus),
  price_credits: creditsOnWireAs("price"),
  charged_credits: creditsOnWireAs("charged"),
  refunded_credits: settledOnly(Schema.BigInt),
  refund_reason: settledOnly(Schema.NullOr(RefundReason)),
  provider_status: Model.FieldOnly("select", "json")(Schema.NullOr(Schema.Int)),
  latency_ms: Model.FieldOnly("select", "insert", "json")(Schema.NullOr(Schema.Int)),
  hold_id: Model.FieldOnly("insert")(Schema.NullOr(HoldId)),
  created_at: TimestampColumn,
  finished_at: Model.Field({
    select: Schema.NullOr(Schema.DateFromSelf),
    insert: Schema.NullOr(Schema.DateFromSelf),
    json: Schema.NullOr(TimestampFromDate)
  }),
  request_sha256: onWireAs(
    Schema.NullOr(Schema.String).annotations({
      description: "SHA-256 hex of the RFC 8785 canonical JSON of {endpoint, path_params, query, body} as sent " +
        "(a missing member as {}); null for calls made before hashes were kept"
    }),
    "request_hash"
  ),
  response_sha256: onWireAs(
    Schema.NullOr(Schema.String).annotations({
      description: "SHA-256 hex of the RFC 8785 canonical JSON of the `data` the call answered; null while pending"
    }),
    "response_hash"
  )
}) {}

/** The refund of a call row as the wire shows it: null when nothing went back. */
export const refundedOf = (call: GatewayCall): typeof Refunded.Type | null =>
  call.refunded_credits > 0n
    ? { ...amountOf(call.refunded_credits), reason: call.refund_reason ?? "provider_error" }
    : null
