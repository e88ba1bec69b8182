import { SqlClient } from "@effect/sql"
import { Clock, Effect, Option, Schema } from "effect"
import { type PlanId, plans } from "../../Domain/Plans.js"
import { DailyQuotaExceeded } from "../../Errors/ApiErrors.js"
import { statementRows } from "../StatementRows.js"

/**
 * Daily recommend quotas per org and plan, counted per UTC day (reset 00:00 UTC): one
 * score lookup per call, one free-text lookup more when the call sends `task`. Both
 * counters move in one conditional statement, so concurrent calls never pass the limit and
 * a refused call counts nothing.
 */
export interface LookupUsage {
  readonly score_lookups: { readonly used: number; readonly limit: number | null }
  readonly free_text_lookups: { readonly used: number; readonly limit: number | null }
  readonly resets_at: Date
}

const DAY_MS = 86_400_000
/** An org's recommend lookups of one day. */
const Usage = Schema.Struct({ score_lookups: Schema.Number, free_text_lookups: Schema.Number })

/** Stands for "no fixed limit" in the statement. */
const UNLIMITED = 2_147_483_647

export class RecommendQuota extends Effect.Service<RecommendQuota>()("Purchasing/RecommendQuota", {
  effect: Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const usageRows = statementRows(Usage)

    const consume = (orgId: string, plan: PlanId, freeText: boolean) =>
      Effect.gen(function*() {
        const now = yield* Clock.currentTimeMillis
        const day = new Date(now - (now % DAY_MS)).toISOString().slice(0, 10)
        const resetsAt = new Date(now - (now % DAY_MS) + DAY_MS)
        const terms = plans[plan]
        const scoreLimit = terms.daily_score_lookups ?? UNLIMITED
        const textLimit = terms.daily_free_text_lookups ?? UNLIMITED
        const text = freeText ? 1 : 0
        const counted = yield* usageRows.one(sql`
          INSERT INTO recommend_usage (org_id, day, score_lookups, free_text_lookups)
          VALUES (${orgId}, ${day}, 1, ${text})
          ON CONFLICT (org_id, day) DO UPDATE
            SET score_lookups = recommend_usage.score_lookups + 1,
                free_text_lookups = recommend_usage.free_text_lookups + ${text}
            WHERE recommend_usage.score_lookups + 1 <= ${scoreLimit}
              AND recommend_usage.free_text_lookups + ${text} <= ${textLimit}
          RETURNING score_lookups, free_text_lookups`).pipe(Effect.orDie)
        if (Option.isNone(counted)) {
          const current = yield* usageRows.one(
            sql`SELECT score_lookups, free_text_lookups FROM recommend_usage WHERE org_id = ${orgId} AND day = ${day}`
          ).pipe(Effect.orDie)
          const which = Option.isSome(current) && current.value.score_lookups >= scoreLimit
            ? `score lookups (${scoreLimit})`
            : `free-text lookups (${textLimit})`
          return yield* new DailyQuotaExceeded({
            message:
              `The ${terms.name} plan's daily ${which} are used up; the quota resets at ${resetsAt.toISOString()} (00:00 UTC)`
          })
        }
        const row = counted.value
        return {
          score_lookups: { used: row.score_lookups, limit: terms.daily_score_lookups },
          free_text_lookups: { used: row.free_text_lookups, limit: terms.daily_free_text_lookups },
          resets_at: resetsAt
        } satisfies LookupUsage
      })

    return { consume } as const
  })
}) {}
