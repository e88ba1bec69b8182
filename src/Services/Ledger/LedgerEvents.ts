import { Effect, Option } from "effect"
import { creditsToUsd } from "../../Domain/Money.js"
import type { Events } from "../Events/Events.js"
import type { LedgerRepo } from "./LedgerRepo.js"

/** An agent's month that a settlement took to 80% of its budget, or past it. */
export interface BudgetReached {
  readonly agentId: string
  readonly agentName: string
  readonly month: string
  readonly spent: bigint
  readonly budget: bigint
}

/**
 * The events the ledger's changes cause, each spelled once. The caller runs them in the
 * transaction of the change (`Events.emit`'s rule).
 */
export const makeLedgerEvents = (events: Events, repo: LedgerRepo) => {
  /** `balance.low`: the balance fell under the org's alert threshold (the alert was armed). */
  const balanceLow = (orgId: string, balance: bigint) =>
    events.emit(orgId, {
      type: "balance.low",
      data: { balance_credits: balance.toString(), balance_usd: creditsToUsd(balance) }
    })

  /** After credits were taken outside a settlement: disarms the org's low-balance alert, and tells when it fired. */
  const lowBalanceAfterRemoval = (orgId: string) =>
    Effect.flatMap(
      repo.disarmLowAlert(orgId),
      Option.match({ onNone: () => Effect.void, onSome: (balance) => balanceLow(orgId, balance) })
    )

  /**
   * `budget.80pct`, once an agent and month: the settlement that takes the month there marks
   * it under the month row's lock (`ledger_settle`) and answers it only then.
   */
  const budgetReached = (orgId: string, reached: BudgetReached) =>
    events.emit(orgId, {
      type: "budget.80pct",
      data: {
        agent_id: reached.agentId,
        agent_name: reached.agentName,
        spent_credits: reached.spent.toString(),
        budget_credits: reached.budget.toString()
      }
    })

  return { balanceLow, lowBalanceAfterRemoval, budgetReached } as const
}
