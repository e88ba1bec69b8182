import pg from "pg"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { killChildService, startChildService } from "../support/childService.js"
import { createTestDatabase, type TestDatabase } from "../support/database.js"
import { type FakeProvider, seedTestCatalogue, startFakeProvider } from "../support/fakeProvider.js"
import { bearer, seedAgent, seedOrg } from "../support/fixtures.js"
import { invariants } from "../support/ledgerChecks.js"
import { eventually, type LedgerRuntime, ledgerRuntime, topUp } from "../support/world.js"

/**
 * The service as a child process killed with SIGKILL while a batch of gateway calls' holds,
 * then a batch of their settlements, is being written (Gateway/CallBatches.ts): the test holds
 * the org's balance row locked, so the batch's transaction is in flight, waiting on it, when
 * the process dies. Nothing of a batch cut off stays (no hold, no count, no call row, no
 * entry); a batch of settlements cut off leaves its holds to the sweeper, which releases them
 * and marks their calls abandoned. Money invariants hold throughout.
 */
let db: TestDatabase
let fake: FakeProvider
let ledger: LedgerRuntime

const TIMEOUT_MS = 1_000

beforeAll(async () => {
  db = await createTestDatabase("batch_crash")
  fake = await startFakeProvider()
  ledger = ledgerRuntime(db)
})

afterAll(async () => {
  await ledger?.dispose()
  await fake?.close()
  await db?.drop()
})

/** A connection of the test's own that keeps the org's balance row locked until released. */
const lockBalance = async (orgId: string) => {
  const client = new pg.Client({ connectionString: db.url })
  await client.connect()
  await client.query("BEGIN")
  await client.query("SELECT 1 FROM org_balances WHERE org_id = $1 FOR UPDATE", [orgId])
  return async () => {
    await client.query("ROLLBACK")
    await client.end()
  }
}

/** The service's statements waiting on a lock whose text contains `fragment`. */
const waitingOn = async (fragment: string) => {
  const rows = await db.query(
    `SELECT count(*)::int AS n FROM pg_stat_activity
     WHERE datname = current_database() AND application_name = 'agent-gateway' AND wait_event_type = 'Lock'
       AND query LIKE $1`,
    [`%${fragment}%`]
  )
  return rows[0].n as number
}

const counts = async (orgId: string) => {
  const [row] = await db.query(
    `SELECT (SELECT count(*)::int FROM ledger_holds WHERE org_id = $1) AS holds,
            (SELECT count(*)::int FROM ledger_holds WHERE org_id = $1 AND status = 'held') AS open,
            (SELECT count(*)::int FROM gateway_calls WHERE org_id = $1) AS calls,
            (SELECT count(*)::int FROM gateway_calls WHERE org_id = $1 AND status = 'pending') AS pending,
            (SELECT COALESCE(sum(calls), 0)::int FROM provider_daily_calls WHERE org_id = $1) AS counted`,
    [orgId]
  )
  return row as { holds: number; open: number; calls: number; pending: number; counted: number }
}

describe("crash with a batch in flight", () => {
  it("keeps nothing of a batch of holds cut off, and sweeps a batch of settlements cut off", async () => {
    const env = {
      DATABASE_URL: db.url,
      PROVIDERS_UPSTREAM: fake.url,
      GATEWAY_TIMEOUT_MS: String(TIMEOUT_MS),
      LEDGER_SWEEP_INTERVAL_MS: "500"
    }
    let child = await startChildService(env)
    await seedTestCatalogue(db)
    const org = await seedOrg(db)
    const INITIAL = 5_000n
    await topUp({ ledger }, org.orgId, INITIAL)
    const agent = await seedAgent(db, org.orgId, { mode: "live", monthlyBudgetCredits: 100_000n })
    const burst = (url: string, endpoint: string, count: number) =>
      Array.from({ length: count }, (_, i) =>
        fetch(`${url}/v1/call`, {
          method: "POST",
          headers: { ...bearer(agent.key), "content-type": "application/json" },
          body: JSON.stringify({ endpoint, query: { i } })
        }).then((r) => r.status, () => 0))
    // Warm the process up, so the first batch is not the one cut off.
    await fetch(`${child.url}/v1/balance`, { headers: bearer(agent.key) })

    // 1. A batch of holds in flight: waiting on the balance row inside its transaction.
    let release = await lockBalance(org.orgId)
    let inFlight = burst(child.url, "fakeprov/ok", 20)
    await eventually(async () => (await waitingOn("ledger_hold")) > 0, { what: "a batch of holds waiting" })
    await killChildService(child)
    await release()
    await Promise.all(inFlight)
    expect(await counts(org.orgId)).toEqual({ holds: 0, open: 0, calls: 0, pending: 0, counted: 0 })
    let inv = await invariants(db, org.orgId)
    expect(inv.balance).toBe(INITIAL)
    expect(inv.entriesSum).toBe(inv.balance)

    // 2. A batch of settlements in flight: calls that time out give their credits back to the
    // locked row (the row is locked while the provider keeps them waiting).
    child = await startChildService(env)
    await fetch(`${child.url}/v1/balance`, { headers: bearer(agent.key) })
    const holdsMade = eventually(async () => (await counts(org.orgId)).open >= 10, { what: "the holds made" })
    inFlight = burst(child.url, "fakeprov/hang", 10)
    await holdsMade
    release = await lockBalance(org.orgId)
    await eventually(async () => (await waitingOn("ledger_settle")) > 0, { what: "a batch of settlements waiting" })
    await killChildService(child)
    await release()
    await Promise.all(inFlight)
    expect(await counts(org.orgId)).toMatchObject({ holds: 10, open: 10, calls: 10, pending: 10 })

    // The restarted service's sweeper releases them once their time (2 x timeout + 5 s) passed.
    child = await startChildService(env)
    await eventually(async () => {
      const now = await counts(org.orgId)
      return now.open === 0 && now.pending === 0
    }, { what: "the sweeper's release", timeoutMs: 60_000 })
    await killChildService(child)
    inv = await invariants(db, org.orgId)
    expect(inv.openHolds).toBe(0)
    expect(inv.negativeBudgets).toBe(0)
    expect(inv.mismatchedHolds).toBe(0)
    expect(inv.entriesSum).toBe(inv.balance)
    expect(inv.balance).toBe(INITIAL)
    const abandoned = await db.query(
      `SELECT count(*)::int AS n FROM gateway_calls WHERE org_id = $1 AND status = 'abandoned' AND charged_credits = 0`,
      [org.orgId]
    )
    expect(abandoned[0].n).toBe(10)
  }, 150_000)
})
