import { Effect } from "effect"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { Ledger } from "../../src/Services/Ledger/Ledger.js"
import { type ChildService, killChildService, startChildService } from "../support/childService.js"
import { openConnections, tally } from "../support/connections.js"
import { createTestDatabase, type TestDatabase } from "../support/database.js"
import { type FakeProvider, seedTestCatalogue, startFakeProvider } from "../support/fakeProvider.js"
import { bearer, seedAgent, type SeededAgent, seedOrg } from "../support/fixtures.js"
import { request } from "../support/server.js"
import { eventually, ledgerRuntime } from "../support/world.js"

/**
 * 1,500 connections at once on a replica whose process may open 1,024 files (Node raises
 * its soft limit to the hard one, so the hard one is set here; with the earlier code, such
 * a process ran out of descriptors, reset hundreds of connections and answered 500): every
 * connection gets a whole HTTP answer, a gateway call's 200 or 503 `service_unavailable`
 * with `Retry-After`, never a reset or a close without one, never a 500; afterwards the
 * replica answers normally. The service runs as its own process, so the connections'
 * client does not share its event loop.
 */
let db: TestDatabase
let fake: FakeProvider
let service: ChildService
let agents: Array<SeededAgent>
const cleanups: Array<() => Promise<unknown>> = []

beforeAll(async () => {
  db = await createTestDatabase("connections")
  cleanups.push(() => db.drop())
  fake = await startFakeProvider()
  cleanups.push(() => fake.close())
  // 64 calls at a time (and so 64 connections to the provider) leave more of the files to clients.
  service = await startChildService({
    DATABASE_URL: db.url,
    PROVIDERS_UPSTREAM: fake.url,
    MAX_CONCURRENT_REQUESTS: "64"
  }, {
    openFiles: "1024:1024"
  })
  cleanups.push(() => killChildService(service))
  await seedTestCatalogue(db)
  const org = await seedOrg(db)
  const ledger = ledgerRuntime(db)
  cleanups.push(() => ledger.dispose())
  await ledger.runPromise(Effect.flatMap(Ledger, (l) => l.credit(org.orgId, 1_000_000n, "top_up", "load")))
  // Three agents, so the agent limit (600 a minute) refuses none of the 1,500.
  agents = await Promise.all(
    [1, 2, 3].map(() => seedAgent(db, org.orgId, { mode: "live", monthlyBudgetCredits: 1_000_000n }))
  )
}, 120_000)

afterAll(async () => {
  for (const cleanup of cleanups.reverse()) await cleanup()
})

const callRequest = (key: string) => {
  const body = JSON.stringify({ endpoint: "fakeprov/ok" })
  return `POST /v1/call HTTP/1.1\r\nhost: service\r\nauthorization: Bearer ${key}\r\n` +
    `content-type: application/json\r\ncontent-length: ${body.length}\r\n\r\n${body}`
}

describe("every connection answered under overload", () => {
  it(
    "answers each of 1,500 concurrent connections with 200 or 503 service_unavailable, then serves normally",
    async () => {
      const port = Number(new URL(service.url).port)
      const results = (await Promise.all(
        agents.map((agent) =>
          openConnections({ port, count: 500, request: callRequest(agent.key), deadlineMs: 90_000 })
        )
      )).flat()
      const counts = tally(results)
      const unanswered = results.filter((r) => r.outcome.kind !== "answered" || r.outcome.status === 500)
      expect(unanswered.slice(0, 3), JSON.stringify({ counts, first: unanswered.slice(0, 3) })).toEqual([])
      // Only complete answers, only the two statuses.
      expect(Object.keys(counts).sort()).toEqual(Object.keys(counts).filter((k) => k === "200" || k === "503").sort())
      expect((counts["200"] ?? 0) + (counts["503"] ?? 0)).toBe(1500)
      expect(counts["200"]).toBeGreaterThan(0)
      for (const { outcome } of results) {
        if (outcome.kind !== "answered" || outcome.status !== 503) continue
        expect(outcome.headers).toMatch(/\r\nretry-after: 1(\r\n|$)/i)
        expect(JSON.parse(outcome.body)).toEqual({
          error: {
            code: "service_unavailable",
            message: expect.stringContaining("over capacity"),
            doc_url: expect.stringContaining("/docs/errors#service_unavailable"),
            retryable: true
          }
        })
      }
      // The load over, the replica serves again (within seconds, bounded here generously).
      await eventually(async () => {
        const answer = await request(`${service.url}/v1/call`, {
          method: "POST",
          headers: bearer(agents[0]!.key),
          body: { endpoint: "fakeprov/ok" }
        })
        return answer.status === 200
      }, { timeoutMs: 30_000, what: "a normal answer after the load" })
    },
    180_000
  )
})
