import { SqlClient, type Statement } from "@effect/sql"
import { Effect } from "effect"

/** A node of PostgreSQL's `EXPLAIN (ANALYZE, FORMAT JSON)` plan: the fields the plan tests read. */
export interface PlanNode {
  readonly "Relation Name"?: string
  readonly "Actual Rows": number
  readonly "Actual Loops": number
  readonly "Rows Removed by Filter"?: number
  readonly Plans?: ReadonlyArray<PlanNode>
}

/** `auto` lets PostgreSQL choose; `force_generic_plan` is what a prepared statement may keep after five runs. */
export type PlanCacheMode = "auto" | "force_generic_plan"

/**
 * Runs the statement `build` makes under EXPLAIN ANALYZE with `planCacheMode`, in a
 * transaction rolled back afterwards (its writes are undone), and answers the plan.
 */
export const explainRolledBack = (
  planCacheMode: PlanCacheMode,
  build: (sql: SqlClient.SqlClient) => Statement.Statement<unknown>
) =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const rolledBack = yield* sql.withTransaction(Effect.gen(function*() {
      yield* sql`SELECT set_config('plan_cache_mode', ${planCacheMode}, true)`
      const [row] = yield* sql<{ "QUERY PLAN": Array<{ Plan: PlanNode }> }>`EXPLAIN (ANALYZE, FORMAT JSON) ${
        build(sql)
      }`
      return yield* Effect.fail({ plan: row!["QUERY PLAN"][0]!.Plan })
    })).pipe(Effect.flip)
    return (rolledBack as { readonly plan: PlanNode }).plan
  })

/** Rows the plan's scans of `relation` read over all their loops, those its filters dropped included. */
export const rowsRead = (node: PlanNode, relation: string): number =>
  (node["Relation Name"] === relation
    ? (node["Actual Rows"] + (node["Rows Removed by Filter"] ?? 0)) * node["Actual Loops"]
    : 0) +
  (node.Plans ?? []).reduce((sum, child) => sum + rowsRead(child, relation), 0)
