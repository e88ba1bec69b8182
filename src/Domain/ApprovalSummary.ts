import { Schema } from "effect"
import { Amount } from "./Money.js"

/** What a purchase waiting for an owner's approval tells the agent (body of `approval_required`). */
export const ApprovalReason = Schema.Literal("over_threshold", "over_budget")
export type ApprovalReason = typeof ApprovalReason.Type

export const ApprovalSummary = Schema.Struct({
  id: Schema.String,
  status: Schema.Literal("waiting"),
  reason: ApprovalReason,
  tool_id: Schema.String,
  item_count: Schema.Number,
  amount: Amount,
  expires_at: Schema.String
}).annotations({ identifier: "ApprovalSummary" })
export type ApprovalSummary = typeof ApprovalSummary.Type
