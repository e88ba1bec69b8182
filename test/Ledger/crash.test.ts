import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { killChildService, startChildService } from "../support/childService.js"
import { createTestDatabase, type TestDatabase } from "../support/database.js"
import { type FakeProvider, seedTestCatalogue, startFakeProvider } from "../support/fakeProvider.js"
import { bearer, seedAgent, seedOrg } from "../support/fixtures.js"
import { invariants } from "../support/ledgerChecks.js"
import { type LedgerRuntime, ledgerRuntime, topUp } from "../support/world.js"

/**
 * The service as a child process (as `npm start` runs it), killed with SIGKILL in the
 * middle of gateway calls at several points, restarted each time; after the sweeper has
 * run, the money invariants hold: entries sum to the balance, no hold is left open, no
 * call is left pending, budgets hold nothing, and every credit is either charged for an
 * answer or back on the balance.
 */
let db: TestDatabase
let fake: FakeProvider
let ledger: LedgerRuntime

const TIMEOUT_MS = 1_000

const startChild = startChildService
const kill = killChildService

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms))

beforeAll(async () => {
  db = await createTestDatabase("crash")
  fake = await startFakeProvider()
  ledger = ledgerRuntime(db)
})

afterAll(async () => {
  await ledger?.dispose()
  await fake?.close()
  await db?.drop()
})

describe("crash recovery", () => {
  it("leaves every credit accounted for after SIGKILL at several points and a restart", async () => {
    const env = {
      DATABASE_URL: db.url,
      PROVIDERS_UPSTREAM: fake.url,
      GATEWAY_TIMEOUT_MS: String(TIMEOUT_MS),
      LEDGER_SWEEP_INTERVAL_MS: "500"
    }
    let child = await startChild(env)
    await seedTestCatalogue(db)
    const org = await seedOrg(db)
    const INITIAL = 5_000n
    await topUp({ ledger }, org.orgId, INITIAL)
    const agents = [
      await seedAgent(db, org.orgId, { mode: "live", monthlyBudgetCredits: 100_000n }),
      await seedAgent(db, org.orgId, { mode: "live", monthlyBudgetCredits: 100_000n })
    ]
    const mix = ["fakeprov/ok", "fakeprov/slow", "fakeprov/hang", "fakeprov/fail", "fakeprov/cost"]
    const burst = (url: string, count: number) =>
      Array.from({ length: count }, (_, i) =>
        fetch(`${url}/v1/call`, {
          method: "POST",
          headers: { ...bearer(agents[i % 2]!.key), "content-type": "application/json" },
          body: JSON.stringify({ endpoint: mix[i % mix.length], query: { i } })
        }).then((r) => r.status, () => 0))

    // Kill points: with the first provider calls in flight, with many settled and many
    // still running, and while hung calls wait on their timeout.
    const providerHasSeen = async (count: number) => {
      const start = fake.seen.length
      while (fake.seen.length < start + count) await sleep(2)
    }
    const killAfter = [
      () => providerHasSeen(10),
      () => providerHasSeen(80),
      async () => {
        await providerHasSeen(40)
        await sleep(TIMEOUT_MS / 2)
      }
    ]
    for (const point of killAfter) {
      // Warm the fresh process up so the burst runs at speed.
      await fetch(`${child.url}/v1/balance`, { headers: bearer(agents[0]!.key) })
      const inFlight = burst(child.url, 150)
      await point()
      await kill(child)
      await Promise.all(inFlight)
      child = await startChild(env)
    }

    // Holds of killed calls are released by the restarted service's sweeper once their
    // time (2 x timeout + 5 s) has passed.
    const deadline = Date.now() + 30_000
    while (Date.now() < deadline) {
      const [open] = await db.query(
        `SELECT (SELECT count(*)::int FROM ledger_holds WHERE org_id = $1 AND status = 'held') AS holds,
                (SELECT count(*)::int FROM gateway_calls WHERE org_id = $1 AND status = 'pending') AS calls`,
        [org.orgId]
      )
      if (open.holds === 0 && open.calls === 0) break
      await sleep(250)
    }
    await kill(child)

    const inv = await invariants(db, org.orgId)
    expect(inv.openHolds).toBe(0)
    expect(inv.entriesSum).toBe(inv.balance)
    expect(inv.negativeBudgets).toBe(0)
    expect(inv.mismatchedHolds).toBe(0)
    const [captured] = await db.query(
      `SELECT COALESCE(SUM(captured), 0) AS captured, count(*)::int AS holds FROM ledger_holds WHERE org_id = $1`,
      [org.orgId]
    )
    expect(captured.holds).toBeGreaterThan(0)
    expect(inv.balance + BigInt(captured.captured)).toBe(INITIAL)
    const pending = await db.query(
      `SELECT count(*)::int AS n FROM gateway_calls WHERE org_id = $1 AND status = 'pending'`,
      [org.orgId]
    )
    expect(pending[0].n).toBe(0)
    const abandoned = await db.query(
      `SELECT count(*)::int AS n, COALESCE(SUM(charged_credits), 0) AS charged FROM gateway_calls
       WHERE org_id = $1 AND status = 'abandoned'`,
      [org.orgId]
    )
    expect(abandoned[0].n).toBeGreaterThan(0)
    expect(abandoned[0].charged).toBe("0")
    // Calls charged match captures; calls not answered charged nothing.
    const [calls] = await db.query(
      `SELECT COALESCE(SUM(charged_credits), 0) AS charged FROM gateway_calls WHERE org_id = $1`,
      [org.orgId]
    )
    expect(BigInt(calls.charged)).toBe(BigInt(captured.captured))
    const spend = await db.query(
      `SELECT COALESCE(SUM(spent), 0) AS spent, COALESCE(SUM(held), 0) AS held FROM agent_month_spend WHERE org_id = $1`,
      [
        org.orgId
      ]
    )
    expect(spend[0].held).toBe("0")
    expect(BigInt(spend[0].spent)).toBe(BigInt(captured.captured))
  }, 120_000)
})
