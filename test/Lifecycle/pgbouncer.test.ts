import pg from "pg"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { type ChildService, killChildService, startChildService } from "../support/childService.js"
import { createTestDatabase, type TestDatabase } from "../support/database.js"
import { type FakeProvider, seedTestCatalogue, startFakeProvider } from "../support/fakeProvider.js"
import { bearer, seedAgent, seedOrg } from "../support/fixtures.js"
import { invariants } from "../support/ledgerChecks.js"
import { type PrivatePgBouncer, startPrivatePgBouncer } from "../support/privatePgBouncer.js"
import { type LedgerRuntime, ledgerRuntime, topUp } from "../support/world.js"

/**
 * The service behind PgBouncer pooling by transaction (DATABASE_PREPARED_STATEMENTS=false):
 * it migrates, serves, and gateway calls and purchases keep the ledger exact, with every
 * statement through the bouncer (its own statistics count them).
 */
let db: TestDatabase
let bouncer: PrivatePgBouncer
let fake: FakeProvider
let ledger: LedgerRuntime
let service: ChildService

beforeAll(async () => {
  db = await createTestDatabase("pgbouncer")
  bouncer = await startPrivatePgBouncer(db.url)
  fake = await startFakeProvider()
  ledger = ledgerRuntime(db)
  service = await startChildService({
    DATABASE_URL: bouncer.url,
    DATABASE_PREPARED_STATEMENTS: "false",
    PROVIDERS_UPSTREAM: fake.url
  })
  await seedTestCatalogue(db)
}, 120_000)

afterAll(async () => {
  if (service !== undefined) await killChildService(service)
  await ledger?.dispose()
  await fake?.close()
  await bouncer?.close()
  await db?.drop()
})

/** Transactions PgBouncer has passed to the test's database so far (its SHOW STATS). */
const bouncedTransactions = async () => {
  const admin = new pg.Client({ connectionString: new URL("/pgbouncer", bouncer.url).toString() })
  await admin.connect()
  try {
    const { rows } = await admin.query("SHOW STATS")
    const ours = rows.find((row) => row.database === new URL(db.url).pathname.slice(1))
    return Number(ours?.total_xact_count ?? 0)
  } finally {
    await admin.end()
  }
}

describe("behind PgBouncer in transaction mode", () => {
  it("serves gateway calls and purchases with the ledger exact", async () => {
    const org = await seedOrg(db)
    await topUp({ ledger }, org.orgId, 10_000n)
    const agent = await seedAgent(db, org.orgId, { mode: "live", monthlyBudgetCredits: 100_000n })
    const before = await bouncedTransactions()
    const endpoints = ["fakeprov/ok", "fakeprov/fail", "fakeprov/cost", "fakeprov/refuse"]
    const statuses = await Promise.all(Array.from({ length: 40 }, async (_, i) => {
      const res = await fetch(`${service.url}/v1/call`, {
        method: "POST",
        headers: { ...bearer(agent.key), "content-type": "application/json" },
        body: JSON.stringify({ endpoint: endpoints[i % endpoints.length], query: { i } })
      })
      await res.arrayBuffer()
      return res.status
    }))
    expect(statuses.every((status) => status === 200)).toBe(true)

    const tester = await seedAgent(db, org.orgId, { mode: "test", approvalThresholdCredits: null })
    const purchase = await fetch(`${service.url}/v1/execute`, {
      method: "POST",
      headers: { ...bearer(tester.key), "content-type": "application/json" },
      body: JSON.stringify({ tool: "jina-reader", inputs: [{ url: "https://news.example.com/a" }] })
    })
    expect(purchase.status).toBe(200)
    const receipt = (await purchase.json()) as { receipt_id: string }
    const read = await fetch(`${service.url}/v1/receipts/${receipt.receipt_id}`, { headers: bearer(tester.key) })
    expect(read.status).toBe(200)

    const checked = await invariants(db, org.orgId)
    expect(checked.openHolds).toBe(0)
    expect(checked.entriesSum).toBe(checked.balance)
    expect(checked.mismatchedHolds).toBe(0)
    const [spent] = await db.query(
      `SELECT COALESCE(SUM(charged_credits), 0)::bigint AS charged FROM gateway_calls WHERE org_id = $1 AND mode = 'live'`,
      [org.orgId]
    )
    expect(checked.balance + BigInt(spent.charged)).toBe(10_000n)
    // The writes went through the bouncer (the service's only database address). Calls that
    // arrive together share a transaction (group commit), so 40 calls make at least one hold
    // batch and one settlement batch, not one transaction each.
    expect((await bouncedTransactions()) - before).toBeGreaterThanOrEqual(2)
  })
})
