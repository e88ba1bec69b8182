import { Schema } from "effect"
import { AgentId, OrgId } from "./Ids.js"

/** An agent as the rules see it: its mode, whether it may act, its budget, threshold and allowlist. */
export const AgentMode = Schema.Literal("test", "live")
export const AgentStatus = Schema.Literal("active", "disabled")

export const AgentRecord = Schema.Struct({
  id: AgentId,
  org_id: OrgId,
  name: Schema.String,
  mode: AgentMode,
  status: AgentStatus,
  /** Credits a calendar month (UTC). */
  monthly_budget_credits: Schema.BigInt,
  /** Purchases above it wait for an owner's approval; null: never ask. */
  approval_threshold_credits: Schema.NullOr(Schema.BigInt),
  ip_allowlist: Schema.Array(Schema.String)
})
export type AgentRecord = typeof AgentRecord.Type
