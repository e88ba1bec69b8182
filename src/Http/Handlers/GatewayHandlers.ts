import { HttpApiBuilder } from "@effect/platform"
import { Clock, DateTime, Effect } from "effect"
import { amountOf } from "../../Domain/Money.js"
import { CurrentActor, CurrentAgent } from "../../Services/Auth/Current.js"
import { CallLog } from "../../Services/Gateway/CallLog.js"
import { Gateway } from "../../Services/Gateway/Gateway.js"
import { Ledger } from "../../Services/Ledger/Ledger.js"
import { monthOf } from "../../Services/Ledger/Time.js"
import { Api } from "../Api.js"

/** `POST /v1/call` and `GET /v1/balance` for agent keys. */
export const GatewayHandlers = HttpApiBuilder.group(Api, "gateway", (handlers) =>
  Effect.gen(function*() {
    const gateway = yield* Gateway
    const ledger = yield* Ledger
    return handlers
      .handle("call", ({ payload }) => Effect.flatMap(CurrentAgent, (agent) => gateway.call(agent, payload)))
      .handle("balance", () =>
        Effect.gen(function*() {
          const agent = yield* CurrentAgent
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
        }))
  }))

/** `GET /v1/orgs/{orgId}/calls` for members (session or org key). */
export const GatewayCallsHandlers = HttpApiBuilder.group(Api, "gatewayCalls", (handlers) =>
  Effect.gen(function*() {
    const log = yield* CallLog
    return handlers.handle("list", ({ urlParams }) =>
      Effect.flatMap(CurrentActor, (actor) =>
        log.list(actor.org_id, urlParams.limit, urlParams.starting_after)))
  }))

/** `GET /v1/providers`: public. */
export const GatewayProvidersHandlers = HttpApiBuilder.group(
  Api,
  "gatewayProviders",
  (handlers) =>
    Effect.gen(function*() {
      const log = yield* CallLog
      return handlers.handle("list", () => log.providers)
    })
)
