import { Clock, DateTime, Effect } from "effect"
import type { AuthenticatedAgent } from "../../Domain/Current.js"
import { amountOf } from "../../Domain/Money.js"
import { Ledger } from "../Ledger/Ledger.js"
import { monthOf } from "../Ledger/Time.js"

/**
 * `GET /v1/balance` (and the MCP `get_balance` tool): the agent's month-to-date spend and its
 * budget, the org's credits and its trial.
 */
export class AgentBalance extends Effect.Service<AgentBalance>()("Gateway/AgentBalance", {
  effect: Effect.gen(function*() {
    const ledger = yield* Ledger

    const of = (agent: AuthenticatedAgent) =>
      Effect.gen(function*() {
        const month = monthOf(yield* Clock.currentTimeMillis).slice(0, 7)
        const [spent, credits, trial] = yield* Effect.all([
          ledger.agentMonthSpend(agent.id),
          ledger.orgCredits(agent.org_id),
          ledger.trialGrant(agent.org_id)
        ], { concurrency: "unbounded" })
        const budget = agent.monthly_budget_credits
        return {
          agent_id: agent.id,
          mode: agent.mode,
          month,
          month_to_date_spend: amountOf(spent),
          monthly_budget: amountOf(budget),
          budget_remaining: amountOf(spent >= budget ? 0n : budget - spent),
          org_credits: amountOf(credits.balance),
          credits_frozen: credits.frozen,
          trial: trial === null ? null : {
            credits: amountOf(trial.credits),
            expires_at: DateTime.formatIso(DateTime.unsafeMake(trial.expiresAt)),
            expired: trial.expiredAt !== null,
            funded: credits.funded
          }
        }
      })

    return { of } as const
  })
}) {}
