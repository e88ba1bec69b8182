import { NodeContext } from "@effect/platform-node"
import { SqlClient, type Statement } from "@effect/sql"
import { PgClient } from "@effect/sql-pg"
import { ConfigProvider, Effect, Layer, ManagedRuntime, Redacted } from "effect"
import { MigrationsLive } from "../../src/Layers/Migrations.js"
import { createTestDatabase } from "./database.js"

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

/**
 * Rows of `relation` that `effect` read (sequential scans and index fetches, from
 * `pg_stat_xact_user_tables`) in a transaction it rolls back, under `planCacheMode`: for the
 * statements a plan cannot be shown of, those inside the database's functions.
 */
export const rowsReadRolledBack = <A, E, R>(
  planCacheMode: PlanCacheMode,
  relation: string,
  effect: Effect.Effect<A, E, R>
) =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const rolledBack = yield* sql.withTransaction(Effect.gen(function*() {
      yield* sql`SELECT set_config('plan_cache_mode', ${planCacheMode}, true)`
      const before = yield* tuplesRead(sql, relation)
      yield* effect
      const after = yield* tuplesRead(sql, relation)
      return yield* Effect.fail({ read: after - before })
    })).pipe(Effect.flip)
    return (rolledBack as { readonly read: number }).read
  })

const tuplesRead = (sql: SqlClient.SqlClient, relation: string) =>
  Effect.map(
    sql<{ read: string }>`
      SELECT (COALESCE(seq_tup_read, 0) + COALESCE(idx_tup_fetch, 0))::text AS read
      FROM pg_stat_xact_user_tables WHERE relname = ${relation}`,
    (rows) => Number(rows[0]?.read ?? 0)
  )

/** Rows the plan's scans of `relation` read over all their loops, those its filters dropped included. */
export const rowsRead = (node: PlanNode, relation: string): number =>
  (node["Relation Name"] === relation
    ? (node["Actual Rows"] + (node["Rows Removed by Filter"] ?? 0)) * node["Actual Loops"]
    : 0) +
  (node.Plans ?? []).reduce((sum, child) => sum + rowsRead(child, relation), 0)

/**
 * A migrated database of its own for a plan test (so the statistics it takes are its own), and
 * a runtime of `layer` on it: one connection, the SQL client kept in the context, an empty
 * configuration. `close` disposes of both.
 */
export const planTestDatabase = async <A>(label: string, layer: Layer.Layer<A, unknown, SqlClient.SqlClient>) => {
  const db = await createTestDatabase(label)
  const pg = PgClient.layer({ url: Redacted.make(db.url), maxConnections: 1 })
  const migrate = ManagedRuntime.make(MigrationsLive.pipe(Layer.provide(pg), Layer.provide(NodeContext.layer)))
  await migrate.runPromise(Effect.void)
  await migrate.dispose()
  const runtime = ManagedRuntime.make(
    layer.pipe(
      Layer.provideMerge(pg),
      Layer.provide(Layer.setConfigProvider(ConfigProvider.fromMap(new Map())))
    )
  )
  const close = async () => {
    await runtime.dispose()
    await db.drop()
  }
  return { db, runtime, close }
}
