import { Model } from "@effect/sql"
import { Schema, Struct } from "effect"
import { AgentId, ApprovalId, JobId, OrgId, ReceiptId } from "./Ids.js"
import { AmountFromCredits } from "./Money.js"
import { TaskTypeId } from "./TaskType.js"
import { LaterTimestampColumn, TimestampColumn } from "./Timestamps.js"
import { ToolEntry } from "./Tool.js"

/** A tool as a purchase names it. */
export const ToolRef = Schema.Struct(Struct.pick(ToolEntry.fields, "id", "slug", "name", "provider")).annotations({
  identifier: "ToolRef"
})
export type ToolRef = typeof ToolRef.Type

/** A purchase's items by outcome (`pending` counts the running ones too). */
export const ItemCounts = Schema.Struct({
  passed: Schema.Int,
  partial: Schema.Int,
  failed: Schema.Int,
  expired: Schema.Int,
  pending: Schema.Int
})
export type ItemCounts = typeof ItemCounts.Type

const credits = (wireKey: string) =>
  Model.Field({
    select: Schema.BigInt,
    insert: Schema.BigInt,
    json: Schema.propertySignature(AmountFromCredits).pipe(Schema.fromKey(wireKey))
  })

/** A sum over the receipt's items (read as text, so no bigint is lost). */
const sum = (wireKey: string) =>
  Model.Field({
    select: Schema.BigInt,
    json: Schema.propertySignature(AmountFromCredits).pipe(Schema.fromKey(wireKey))
  })

/** The receipts table's columns, in the wire's order; the tool's id and the amount held stay off the wire. */
const receiptFields = {
  id: Model.GeneratedByApp(ReceiptId),
  org_id: OrgId,
  agent_id: AgentId,
  mode: Schema.Literal("test", "live"),
  tool_id: Model.FieldExcept("json", "jsonCreate", "jsonUpdate")(Schema.String),
  task_type: TaskTypeId,
  status: Schema.Literal("running", "done"),
  item_count: Schema.Int,
  /** The price of one item, held for each. */
  price_credits: credits("price_per_item"),
  held_credits: Model.FieldExcept("json", "jsonCreate", "jsonUpdate")(Schema.BigInt),
  /** Whether the buyer let the service fall back to the next-ranked tool. */
  fallback: Model.Field({
    select: Schema.Boolean,
    insert: Schema.Boolean,
    json: Schema.propertySignature(Schema.Boolean).pipe(Schema.fromKey("fallback_requested"))
  }),
  job_id: Schema.NullOr(JobId),
  approval_id: Schema.NullOr(ApprovalId),
  idempotency_key: Schema.NullOr(Schema.String),
  created_at: TimestampColumn,
  completed_at: LaterTimestampColumn
} as const

/**
 * A purchase's receipt, declared once: `Receipt` decodes its row and `Receipt.insert` is a
 * new one (written with the purchase's holds). What it charged and refunded are sums over its
 * items, never a second copy: `ReceiptTotals` is the row with those sums and its tool, as the
 * repository reads it, and `ReceiptTotals.json` the wire's receipt summary (amount objects,
 * timestamps ISO 8601).
 */
export class Receipt extends Model.Class<Receipt>("Receipt")(receiptFields) {}

export class ReceiptTotals extends Model.Class<ReceiptTotals>("ReceiptTotals")({
  ...Struct.pick(receiptFields, "id", "org_id", "agent_id", "mode", "tool_id"),
  tool: Model.FieldOnly("select", "json")(ToolRef),
  ...Struct.pick(receiptFields, "task_type", "status", "item_count", "price_credits", "held_credits"),
  charged_credits: sum("charged"),
  refunded_credits: sum("refunded"),
  counts: Model.FieldOnly("select", "json")(ItemCounts),
  ...Struct.pick(receiptFields, "fallback"),
  fallback_used: Model.FieldOnly("select", "json")(Schema.Boolean),
  ...Struct.pick(receiptFields, "job_id", "approval_id", "idempotency_key", "created_at", "completed_at")
}) {}
