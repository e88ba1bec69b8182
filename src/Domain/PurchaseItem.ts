import { Model } from "@effect/sql"
import { Schema } from "effect"
import { HoldId, ReceiptId, ReceiptItemId } from "./Ids.js"

export const ItemStatus = Schema.Literal("pending", "running", "passed", "partial", "failed", "expired")
export type ItemStatus = typeof ItemStatus.Type

/** A column written when the item's outcome is recorded, never with the new item. */
const outcome = <S extends Schema.Schema.All>(schema: S) =>
  Model.FieldExcept("insert", "jsonCreate", "jsonUpdate")(schema)

/**
 * An item of a purchase (one per input), declared once: `PurchaseItem` decodes its row and
 * `PurchaseItem.insert` is a new one, held and pending (or running, claimed by the request
 * that runs it). The wire's items (`ReceiptItem`, `ResultItem`, `ReceiptItemDetail` in
 * Domain/Purchasing.ts) are views of it made in Services/Purchasing/Receipts.ts: whether it
 * was charged, its input's hash and its check are computed, not columns.
 */
export class PurchaseItem extends Model.Class<PurchaseItem>("PurchaseItem")({
  id: Model.GeneratedByApp(ReceiptItemId),
  receipt_id: ReceiptId,
  idx: Schema.Int,
  /** A jsonb column: the input as the agent sent it. */
  input: Model.Field({
    select: Schema.Record({ key: Schema.String, value: Schema.Unknown }),
    insert: Schema.parseJson(Schema.Record({ key: Schema.String, value: Schema.Unknown })),
    json: Schema.Record({ key: Schema.String, value: Schema.Unknown })
  }),
  status: Model.Field({
    select: ItemStatus,
    insert: Schema.Literal("pending", "running"),
    json: ItemStatus
  }),
  /** Null only for rows older than holds per item. */
  hold_id: Model.Field({ select: Schema.NullOr(HoldId), insert: HoldId, json: Schema.NullOr(HoldId) }),
  tool_id: outcome(Schema.NullOr(Schema.String)),
  provider: outcome(Schema.NullOr(Schema.String)),
  fallback_from: outcome(Schema.NullOr(Schema.String)),
  cost_credits: outcome(Schema.BigInt),
  /** A jsonb column: the result in the task type's canonical shape, forgotten after 30 days. */
  result: outcome(Schema.Unknown),
  result_hash: outcome(Schema.NullOr(Schema.String)),
  check_id: outcome(Schema.NullOr(Schema.String)),
  check_version: outcome(Schema.NullOr(Schema.String)),
  reason: outcome(Schema.NullOr(Schema.String)),
  error_code: outcome(Schema.NullOr(Schema.String)),
  refunded_credits: outcome(Schema.BigInt),
  runs: Schema.Int,
  claimed_by: Schema.NullOr(Schema.String),
  claimed_until: Schema.NullOr(Schema.DateFromSelf),
  started_at: Schema.NullOr(Schema.DateFromSelf),
  finished_at: outcome(Schema.NullOr(Schema.DateFromSelf))
}) {}
