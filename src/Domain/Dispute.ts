import { Model } from "@effect/sql"
import { Schema } from "effect"
import { AgentId, DisputeId, HoldId, OrgId, ReceiptId, ReceiptItemId } from "./Ids.js"
import { AmountFromCredits } from "./Money.js"
import { RecordSignature } from "./RecordSignature.js"
import { LaterTimestampColumn, TimestampColumn } from "./Timestamps.js"

export const DisputeStatus = Schema.Literal("open", "upheld", "rejected")
export type DisputeStatus = typeof DisputeStatus.Type

/**
 * A dispute of a charged receipt item, declared once: `Dispute` decodes its row as the
 * repository reads it (with the disputed item's cost and hold, and `decision`, the status
 * once decided, computed by the same SELECT), `Dispute.insert` is a new row, `Dispute.json`
 * the wire record before its signature (the refund as an amount object, timestamps ISO 8601;
 * the org, the item's row id, its hold and the deciding administrator stay off the wire).
 */
export class Dispute extends Model.Class<Dispute>("Dispute")({
  id: Model.GeneratedByApp(DisputeId),
  org_id: Model.FieldExcept("json", "jsonCreate", "jsonUpdate")(OrgId),
  receipt_id: ReceiptId,
  item_id: Model.FieldExcept("json", "jsonCreate", "jsonUpdate")(ReceiptItemId),
  item_index: Schema.Int,
  agent_id: AgentId,
  status: DisputeStatus,
  decision: Model.FieldOnly("select", "json")(Schema.NullOr(Schema.Literal("upheld", "rejected"))),
  reason: Schema.NullOr(Schema.String).annotations({ description: "What the buyer said was wrong" }),
  note: Model.FieldExcept("insert", "jsonCreate", "jsonUpdate")(
    Schema.NullOr(Schema.String).annotations({ description: "The administrator's reason for the decision" })
  ),
  /** What the disputed item was charged (its row's `cost_credits`). */
  item_cost: Model.Field({ select: Schema.BigInt, json: AmountFromCredits }),
  refunded_credits: Model.Field({
    select: Schema.BigInt,
    json: Schema.propertySignature(AmountFromCredits).pipe(Schema.fromKey("refund"))
  }),
  decided_by: Model.FieldOnly("select")(Schema.NullOr(Schema.String)),
  /** The disputed item's hold, which an upheld dispute refunds. */
  hold_id: Model.FieldOnly("select")(Schema.NullOr(HoldId)),
  created_at: TimestampColumn,
  decided_at: LaterTimestampColumn
}) {}

/** The wire's dispute: the record with the service's signature of it. */
export const SignedDispute = Schema.Struct({ ...Dispute.json.fields, signature: RecordSignature }).annotations({
  identifier: "Dispute"
})
export type SignedDispute = typeof SignedDispute.Type

/** What opening a dispute names: the receipt (its id decoded at the edge), the item's index, and why. */
export interface DisputeOpening {
  readonly receipt_id: ReceiptId
  readonly item_index: number
  readonly reason?: string | undefined
}
