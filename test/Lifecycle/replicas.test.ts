import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { type ChildService, killChildService, startChildService } from "../support/childService.js"
import { createTestDatabase, type TestDatabase } from "../support/database.js"
import { type FakeProvider, seedTestCatalogue, startFakeProvider } from "../support/fakeProvider.js"
import { bearer, seedAgent, seedOrg } from "../support/fixtures.js"
import { invariants } from "../support/ledgerChecks.js"
import { type PrivateRedis, startPrivateRedis } from "../support/privateRedis.js"
import { type LedgerRuntime, ledgerRuntime, topUp } from "../support/world.js"

/**
 * Two replicas, as on two machines: separate service processes on their own ports sharing
 * one PostgreSQL and one Redis. Requests alternate between them, concurrently. A rate limit
 * counts across both exactly, and an agent's budget and the org's balance are never
 * overspent between them.
 */
let db: TestDatabase
let redis: PrivateRedis
let fake: FakeProvider
let ledger: LedgerRuntime
const replicas: Array<ChildService> = []

beforeAll(async () => {
  db = await createTestDatabase("replicas")
  redis = await startPrivateRedis()
  fake = await startFakeProvider()
  ledger = ledgerRuntime(db)
  const env = { DATABASE_URL: db.url, REDIS_URL: redis.url, PROVIDERS_UPSTREAM: fake.url, TRUSTED_PROXIES: "127.0.0.1" }
  // One after the other: the first migrates the database.
  replicas.push(await startChildService(env))
  replicas.push(await startChildService(env))
  await seedTestCatalogue(db)
}, 180_000)

afterAll(async () => {
  for (const replica of replicas) await killChildService(replica)
  await ledger?.dispose()
  await fake?.close()
  await redis?.close()
  await db?.drop()
})

/** The i-th request's replica: they take turns. */
const replicaUrl = (i: number) => replicas[i % replicas.length]!.url

/**
 * Runs `count` requests, `concurrency` at a time, answering each one's status, with its
 * error code when it has one ("402 over_budget"), in order.
 */
const answersOf = async (count: number, concurrency: number, send: (i: number) => Promise<Response>) => {
  const answers: Array<string> = new Array(count)
  let next = 0
  const lane = async () => {
    while (next < count) {
      const i = next++
      const res = await send(i)
      const text = await res.text()
      const code = res.ok ? undefined : (JSON.parse(text) as { error?: { code?: string } }).error?.code
      answers[i] = code === undefined ? `${res.status}` : `${res.status} ${code}`
    }
  }
  await Promise.all(Array.from({ length: concurrency }, lane))
  return answers
}

/** How many of each answer: a failure then shows every answer, not only the count that was off. */
const tally = (answers: ReadonlyArray<string>) => {
  const counts: Record<string, number> = {}
  for (const answer of answers) counts[answer] = (counts[answer] ?? 0) + 1
  return counts
}

describe("two replicas sharing PostgreSQL and Redis", () => {
  it("count an address's public limit across both: 120 a minute, not 120 each", async () => {
    const answers = await answersOf(
      130,
      8,
      (i) => fetch(`${replicaUrl(i)}/v1/task-types`, { headers: { "x-forwarded-for": "10.77.0.1" } })
    )
    expect(tally(answers)).toEqual({ "200": 120, "429 rate_limited": 10 })
  })

  it("count an agent key's limit across both: 600 a minute", async () => {
    const org = await seedOrg(db)
    const agent = await seedAgent(db, org.orgId, { mode: "live" })
    const answers = await answersOf(
      610,
      16,
      (i) => fetch(`${replicaUrl(i)}/v1/balance`, { headers: bearer(agent.key) })
    )
    expect(tally(answers)).toEqual({ "200": 600, "429 rate_limited": 10 })
  })

  it("never overspend a budget or a balance between them", async () => {
    // fakeprov/ok costs 10 credits: the budget covers 12 calls, the balance 20.
    const org = await seedOrg(db)
    await topUp({ ledger }, org.orgId, 200n)
    const budgeted = await seedAgent(db, org.orgId, { mode: "live", monthlyBudgetCredits: 120n })
    const other = await seedAgent(db, org.orgId, { mode: "live", monthlyBudgetCredits: 100_000n })
    const call = (key: string, i: number) =>
      fetch(`${replicaUrl(i)}/v1/call`, {
        method: "POST",
        headers: { ...bearer(key), "content-type": "application/json" },
        body: JSON.stringify({ endpoint: "fakeprov/ok", query: { i } })
      })
    const first = await answersOf(30, 12, (i) => call(budgeted.key, i))
    expect(tally(first)).toEqual({ "200": 12, "402 over_budget": 18 })
    // The rest of the balance: 80 credits, 8 calls, whichever replica takes them.
    const second = await answersOf(20, 12, (i) => call(other.key, i))
    expect(tally(second)).toEqual({ "200": 8, "402 insufficient_credits": 12 })
    const checked = await invariants(db, org.orgId)
    expect(checked.balance).toBe(0n)
    expect(checked.entriesSum).toBe(0n)
    expect(checked.openHolds).toBe(0)
    expect(checked.mismatchedHolds).toBe(0)
    expect(checked.negativeBudgets).toBe(0)
  })
})
