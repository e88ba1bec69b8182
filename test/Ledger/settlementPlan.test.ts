import { SqlClient } from "@effect/sql"
import { Effect, type ManagedRuntime } from "effect"
import { randomUUID } from "node:crypto"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import type { HoldId } from "../../src/Domain/Ids.js"
import { Ledger } from "../../src/Services/Ledger/Ledger.js"
import { LedgerStandaloneLive } from "../../src/Services/Ledger/LedgerStandalone.js"
import type { TestDatabase } from "../support/database.js"
import { seedAgent, seedOrg } from "../support/fixtures.js"
import { type PlanCacheMode, planTestDatabase, rowsReadRolledBack } from "../support/queryPlan.js"

/**
 * The settlement (the ledger's `ledger_settle` function) when many holds are open and the table's statistics were taken
 * before they were (a burst of traffic on a young table, or a prepared statement's generic
 * plan): the hold must be found by its key, not by reading every open hold.
 */
const OPEN_HOLDS = 2_000

let db: TestDatabase
let close: () => Promise<void>
let runtime: ManagedRuntime.ManagedRuntime<Ledger | SqlClient.SqlClient, unknown>
let openHold: HoldId

beforeAll(async () => {
  const planned = await planTestDatabase("settlement_plan", LedgerStandaloneLive)
  db = planned.db
  runtime = planned.runtime
  close = planned.close
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
  await close?.()
})

/** The holds a capture reads, in a transaction it rolls back. */
const holdsReadByCapture = (planCacheMode: PlanCacheMode) =>
  runtime.runPromise(
    Effect.flatMap(Ledger, (ledger) => rowsReadRolledBack(planCacheMode, "ledger_holds", ledger.capture(openHold, 10n)))
  )

describe("the settlement of a hold", () => {
  it.each(["auto", "force_generic_plan"] as const)(
    "finds its hold by key (%s) among 2,000 open holds the statistics do not know",
    async (mode) => {
      // The hold itself (its update reads it once more); reading the open holds reads 2,000.
      expect(await holdsReadByCapture(mode)).toBeLessThanOrEqual(4)
    }
  )
})
