import { Clock, Effect, Option } from "effect"
import type { OrgActor } from "../../Domain/Current.js"
import { amountOf } from "../../Domain/Money.js"
import { trialTerms } from "../../Domain/Plans.js"
import { InvalidInput } from "../../Errors/ApiErrors.js"
import { AppConfig } from "../AppConfig.js"
import { Ledger } from "../Ledger/Ledger.js"
import { dayOf, monthOf } from "../Ledger/Time.js"
import { Refusals } from "./Refusals.js"
import { type UsageRange, UsageRepo } from "./UsageRepo.js"

const DAY_MS = 24 * 60 * 60 * 1000
const HOUR_MS = 60 * 60 * 1000
/** The longest range one request may ask for. */
export const MAX_RANGE_DAYS = 366

const dayText = (date: Date) => dayOf(date.getTime())

/** A `YYYY-MM-DD` that names a real day, as a UTC midnight. */
const parseDay = (field: string, text: string) => {
  const date = new Date(`${text}T00:00:00.000Z`)
  return /^\d{4}-\d{2}-\d{2}$/.test(text) && !Number.isNaN(date.getTime()) && dayText(date) === text
    ? Effect.succeed(date)
    : Effect.fail(new InvalidInput({ message: `\`${field}\` must be a day as YYYY-MM-DD` }))
}

export interface UsageQuery {
  readonly from?: string | undefined
  readonly to?: string | undefined
}

/** The UTC days a query asks for: `from` and `to` inclusive, by default the month so far. */
export const usageRange = (orgId: string, query: UsageQuery) =>
  Effect.gen(function*() {
    const today = new Date(Math.floor((yield* Clock.currentTimeMillis) / DAY_MS) * DAY_MS)
    const monthStart = new Date(Date.UTC(today.getUTCFullYear(), today.getUTCMonth(), 1))
    const from = query.from === undefined ? monthStart : yield* parseDay("from", query.from)
    const to = query.to === undefined ? today : yield* parseDay("to", query.to)
    if (to < from) return yield* new InvalidInput({ message: "`to` is before `from`" })
    const days = (to.getTime() - from.getTime()) / DAY_MS + 1
    if (days > MAX_RANGE_DAYS) {
      return yield* new InvalidInput({ message: `A range covers at most ${MAX_RANGE_DAYS} days` })
    }
    return { orgId, from, until: new Date(to.getTime() + DAY_MS) } satisfies UsageRange
  })

/**
 * `GET /v1/orgs/{orgId}/usage`: the org's balance, trial and frozen state now, and where
 * its credits went over a range of UTC days (`from` and `to` inclusive; by default the
 * month so far).
 */
export class Usage extends Effect.Service<Usage>()("Usage/Usage", {
  dependencies: [UsageRepo.Default, AppConfig.Default, Refusals.Default],
  effect: Effect.gen(function*() {
    const repo = yield* UsageRepo
    const ledger = yield* Ledger
    const { livePurchasesOpen } = yield* AppConfig
    const refusals = yield* Refusals

    const get = (actor: OrgActor, query: UsageQuery) =>
      Effect.gen(function*() {
        const range = yield* usageRange(actor.org_id, query)
        // Counts gathered in memory are written first, so a refusal just made is listed.
        yield* refusals.flush
        const month = monthOf(yield* Clock.currentTimeMillis)
        const [credits, trial, window, tested, refused, agents, days, endpoints, tools, budgets] = yield* Effect.all([
          ledger.orgCredits(actor.org_id),
          ledger.trialGrant(actor.org_id),
          repo.trialWindow(actor.org_id),
          repo.testActivity(range),
          repo.refusals(range),
          repo.byAgent(range),
          repo.byDay(range),
          repo.topEndpoints(range),
          repo.topTools(range),
          repo.budgets(actor.org_id, month)
        ], { concurrency: "unbounded" })
        const now = yield* Clock.currentTimeMillis
        const total = agents.reduce((sum, row) => sum + row.spend, 0n)
        const hour = Math.floor(now / HOUR_MS) * HOUR_MS
        const funded = Option.match(window, { onNone: () => false, onSome: (row) => row.funded })
        const spentThisHour = Option.match(window, {
          onNone: () => 0n,
          onSome: (row) => row.trial_window_start?.getTime() === hour ? row.trial_window_spent : 0n
        })
        return {
          org_id: actor.org_id,
          balance: amountOf(credits.balance),
          credits_frozen: credits.frozen,
          funded,
          trial_limit: funded ? null : {
            per_hour: amountOf(trialTerms.hourly_spend_limit_credits),
            spent_this_hour: amountOf(spentThisHour),
            resets_at: new Date(hour + HOUR_MS).toISOString()
          },
          live_purchases_open: livePurchasesOpen,
          test_activity: {
            purchases: tested.purchases,
            items: tested.items,
            calls: tested.calls,
            priced: amountOf(tested.priced)
          },
          refusals: refused,
          trial: trial === null ? null : {
            credits: amountOf(trial.credits),
            expires_at: trial.expiresAt.toISOString(),
            expired: trial.expiredAt !== null || trial.expiresAt.getTime() <= now
          },
          range: { from: dayText(range.from), to: dayText(new Date(range.until.getTime() - DAY_MS)) },
          total_spend: amountOf(total),
          by_agent: agents.map((row) => ({
            agent_id: row.agent_id,
            name: row.name,
            spend: amountOf(row.spend)
          })),
          budgets: budgets.map((row) => ({
            agent_id: row.agent_id,
            month: month.slice(0, 7),
            spent: amountOf(row.spent),
            budget: amountOf(row.budget),
            remaining: amountOf(row.spent >= row.budget ? 0n : row.budget - row.spent)
          })),
          by_day: days.map((row) => ({ day: row.day, spend: amountOf(row.spend) })),
          top_endpoints: endpoints.map((row) => ({
            endpoint: row.id,
            calls: row.uses,
            spend: amountOf(row.spend)
          })),
          top_tools: tools.map((row) => ({
            tool: row.id,
            name: row.name,
            items: row.uses,
            spend: amountOf(row.spend)
          }))
        }
      })

    return { get } as const
  })
}) {}
