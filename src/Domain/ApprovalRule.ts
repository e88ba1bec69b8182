import type { ApprovalReason } from "./ApprovalSummary.js"

/**
 * When a purchase needs an owner's approval first: when it would take the agent past its
 * monthly budget (`over_budget`, checked first: an approval then also lifts the budget for
 * this purchase), or when it costs more than the agent's approval threshold
 * (`over_threshold`; no threshold means none). Exactly at the budget or the threshold is
 * still allowed. Answers the reason, or null when the purchase may go ahead.
 */
export interface ApprovalInputs {
  /** What the purchase costs, in credits. */
  readonly amount: bigint
  /** What the agent already spent (and holds) this month. */
  readonly spentThisMonth: bigint
  readonly monthlyBudget: bigint
  readonly threshold: bigint | null
}

export const approvalNeeded = (inputs: ApprovalInputs): ApprovalReason | null => {
  if (inputs.spentThisMonth + inputs.amount > inputs.monthlyBudget) return "over_budget"
  if (inputs.threshold !== null && inputs.amount > inputs.threshold) return "over_threshold"
  return null
}
