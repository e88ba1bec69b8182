import { NodeContext } from "@effect/platform-node"
import { SqlClient } from "@effect/sql"
import { PgClient } from "@effect/sql-pg"
import { ConfigProvider, Effect, Layer, ManagedRuntime, Redacted } from "effect"
import { randomUUID } from "node:crypto"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import type { HoldId } from "../../src/Domain/Ids.js"
import { MigrationsLive } from "../../src/Layers/Migrations.js"
import { Ledger } from "../../src/Services/Ledger/Ledger.js"
import { LedgerRepo } from "../../src/Services/Ledger/LedgerRepo.js"
import { LedgerStandaloneLive } from "../../src/Services/Ledger/LedgerStandalone.js"
import { createTestDatabase, type TestDatabase } from "../support/database.js"
import { seedAgent, seedOrg } from "../support/fixtures.js"

/**
 * The settlement's plan when many holds are open and the table's statistics were taken
 * before they were (a burst of traffic on a young table, or a prepared statement's generic
 * plan): the hold must be found by its key, not by reading every open hold.
 */
const OPEN_HOLDS = 2_000

let db: TestDatabase
let runtime: ManagedRuntime.ManagedRuntime<Ledger | LedgerRepo | SqlClient.SqlClient, unknown>
let openHold: HoldId

beforeAll(async () => {
  db = await createTestDatabase("settlement_plan")
  const pg = PgClient.layer({ url: Redacted.make(db.url), maxConnections: 1 })
  const migrate = ManagedRuntime.make(MigrationsLive.pipe(Layer.provide(pg), Layer.provide(NodeContext.layer)))
  await migrate.runPromise(Effect.void)
  await migrate.dispose()
  runtime = ManagedRuntime.make(
    Layer.mergeAll(LedgerStandaloneLive, LedgerRepo.Default).pipe(
      Layer.provideMerge(pg),
      Layer.provide(Layer.setConfigProvider(ConfigProvider.fromMap(new Map())))
    )
  )
  const org = await seedOrg(db)
  const agent = await seedAgent(db, org.orgId, { mode: "live", monthlyBudgetCredits: 1_000_000_000n })
  openHold = await runtime.runPromise(Effect.gen(function*() {
    const ledger = yield* Ledger
    yield* ledger.credit(org.orgId, 1_000_000_000n, "top_up", "test")
    const request = { orgId: org.orgId, agentId: agent.agentId, amount: 10n, purpose: "test", testMode: false }
    // A few holds settled, then the statistics, then many open holds.
    for (let i = 0; i < 10; i++) {
      const hold = yield* ledger.hold({ ...request, reference: randomUUID() })
      yield* ledger.capture(hold.id, 10n)
    }
    const sql = yield* SqlClient.SqlClient
    yield* sql`ANALYZE`
    const holds = yield* ledger.holdMany(request, Array.from({ length: OPEN_HOLDS }, () => randomUUID()))
    return holds[OPEN_HOLDS - 1]!.id
  }))
}, 60_000)

afterAll(async () => {
  await runtime?.dispose()
  await db?.drop()
})

interface PlanNode {
  readonly "Relation Name"?: string
  readonly "Actual Rows": number
  readonly "Actual Loops": number
  readonly "Rows Removed by Filter"?: number
  readonly Plans?: ReadonlyArray<PlanNode>
}

/** Rows the plan's scans of ledger_holds read, over all their loops (kept and filtered out). */
const holdRowsRead = (node: PlanNode): number =>
  (node["Relation Name"] === "ledger_holds"
    ? (node["Actual Rows"] + (node["Rows Removed by Filter"] ?? 0)) * node["Actual Loops"]
    : 0) +
  (node.Plans ?? []).reduce((sum, child) => sum + holdRowsRead(child), 0)

/** Runs a capture's statement under EXPLAIN ANALYZE in a transaction it rolls back. */
const explainCapture = (planCacheMode: "auto" | "force_generic_plan") =>
  runtime.runPromise(
    Effect.gen(function*() {
      const sql = yield* SqlClient.SqlClient
      const repo = yield* LedgerRepo
      return yield* sql.withTransaction(Effect.gen(function*() {
        yield* sql`SELECT set_config('plan_cache_mode', ${planCacheMode}, true)`
        const [row] = yield* sql<{ "QUERY PLAN": Array<{ Plan: PlanNode }> }>`EXPLAIN (ANALYZE, FORMAT JSON) ${
          repo.settleSql(openHold, 10n, new Date())
        }`
        return yield* Effect.fail({ plan: row!["QUERY PLAN"][0]!.Plan })
      })).pipe(Effect.flip, Effect.map((rolledBack) => (rolledBack as { plan: PlanNode }).plan))
    })
  )

describe("the settlement of a hold", () => {
  it.each(["auto", "force_generic_plan"] as const)(
    "finds its hold by key (%s) among 2,000 open holds the statistics do not know",
    async (mode) => {
      const plan = await explainCapture(mode)
      expect(plan["Actual Rows"]).toBe(1)
      // The hold itself (its update reads it once more); reading the open holds reads 2,000.
      expect(holdRowsRead(plan)).toBeLessThanOrEqual(4)
    }
  )
})
