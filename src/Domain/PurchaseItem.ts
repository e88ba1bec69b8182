import { Model } from "@effect/sql"
import { Schema } from "effect"
import { HoldId, ReceiptId, ReceiptItemId } from "./Ids.js"
import { AmountFromCredits } from "./Money.js"
import { TimestampFromDate } from "./Timestamps.js"

export const ItemStatus = Schema.Literal("pending", "running", "passed", "partial", "failed", "expired")
export type ItemStatus = typeof ItemStatus.Type

/** A column written when the item's outcome is recorded, never with the new item. */
const outcome = <S extends Schema.Schema.All>(schema: S) =>
  Model.FieldExcept("insert", "jsonCreate", "jsonUpdate")(schema)

/** An outcome column the wire shows under another name. */
const outcomeOnWireAs = <S extends Schema.Schema.Any>(schema: S, key: string) =>
  Model.Field({ select: schema, update: schema, json: Schema.propertySignature(schema).pipe(Schema.fromKey(key)) })

/** Credits of an outcome, on the wire as the amount object under another name. */
const creditsOnWireAs = (key: string) =>
  Model.Field({
    select: Schema.BigInt,
    update: Schema.BigInt,
    json: Schema.propertySignature(AmountFromCredits).pipe(Schema.fromKey(key))
  })

/**
 * An item of a purchase (one per input), declared once: `PurchaseItem` decodes its row,
 * `PurchaseItem.insert` is a new one, held and pending (or running, claimed by the request
 * that runs it), and `PurchaseItem.json` holds its columns as the wire names them. The wire's
 * items (`ReceiptItem`, `ResultItem`, `ReceiptItemDetail` in Domain/Purchasing.ts) pick
 * those and add what is computed, not kept: whether it was charged, its input's hash and its
 * check (Services/Purchasing/Receipts.ts).
 */
export class PurchaseItem extends Model.Class<PurchaseItem>("PurchaseItem")({
  id: Model.GeneratedByApp(ReceiptItemId),
  receipt_id: ReceiptId,
  idx: Model.Field({
    select: Schema.Int,
    insert: Schema.Int,
    json: Schema.propertySignature(Schema.Int).pipe(Schema.fromKey("index"))
  }),
  /** A jsonb column: the input as the agent sent it. */
  input: Model.Field({
    select: Schema.Record({ key: Schema.String, value: Schema.Unknown }),
    insert: Schema.parseJson(Schema.Record({ key: Schema.String, value: Schema.Unknown })),
    json: Schema.Record({ key: Schema.String, value: Schema.Unknown })
  }),
  status: Model.Field({
    select: ItemStatus,
    insert: Schema.Literal("pending", "running"),
    json: Schema.propertySignature(ItemStatus).pipe(Schema.fromKey("outcome"))
  }),
  /** Null only for rows older than holds per item. */
  hold_id: Model.Field({ select: Schema.NullOr(HoldId), insert: HoldId, json: Schema.NullOr(HoldId) }),
  tool_id: outcome(Schema.NullOr(Schema.String)),
  provider: outcome(Schema.NullOr(Schema.String)),
  fallback_from: outcomeOnWireAs(Schema.NullOr(Schema.String), "fallback_from_tool_id"),
  cost_credits: creditsOnWireAs("cost"),
  /** A jsonb column: the result in the task type's canonical shape, forgotten after 30 days. */
  result: outcome(Schema.Unknown),
  result_hash: outcome(
    Schema.NullOr(Schema.String).annotations({ description: "SHA-256 hex of the canonical JSON of the result" })
  ),
  check_id: outcome(Schema.NullOr(Schema.String)),
  check_version: outcome(Schema.NullOr(Schema.String)),
  reason: outcome(Schema.NullOr(Schema.String).annotations({ description: "Why the result is partial or failed" })),
  error_code: outcome(
    Schema.NullOr(Schema.String).annotations({
      description: "check_failed, provider_error or interrupted for failed items; null otherwise"
    })
  ),
  refunded_credits: creditsOnWireAs("refund"),
  runs: Schema.Int,
  claimed_by: Schema.NullOr(Schema.String),
  claimed_until: Schema.NullOr(Schema.DateFromSelf),
  started_at: Schema.NullOr(Schema.DateFromSelf),
  finished_at: Model.Field({
    select: Schema.NullOr(Schema.DateFromSelf),
    update: Schema.NullOr(Schema.DateFromSelf),
    json: Schema.NullOr(TimestampFromDate)
  })
}) {}
