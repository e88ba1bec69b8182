import pg from "pg"
import { afterAll, describe, expect, it } from "vitest"
import { openConnections, tally } from "../support/connections.js"
import { eventually } from "../support/eventually.js"
import { bearer, seedAgent, seedOrg } from "../support/fixtures.js"
import { request } from "../support/server.js"
import { startWorld, topUp, type World } from "../support/world.js"

/**
 * More load than a replica can serve answers at once and clearly: 503
 * `service_unavailable` with `Retry-After` and the error body, never late, never empty,
 * never 500; the probes still answer meanwhile.
 */
const worlds: Array<{ close: () => Promise<void> }> = []
afterAll(async () => {
  for (const world of worlds) await world.close()
})

const expectUnavailable = (answer: { status: number; headers: Headers; json: any }, message: RegExp) => {
  expect(answer.status).toBe(503)
  expect(answer.headers.get("retry-after")).toBe("1")
  expect(answer.json).toEqual({
    error: {
      code: "service_unavailable",
      message: expect.stringMatching(message),
      doc_url: expect.stringContaining("/docs/errors#service_unavailable"),
      retryable: true
    }
  })
}

describe("bounded concurrency with a queue", () => {
  it("runs 2, queues 2 (until the queue timeout), and refuses the rest at once", async () => {
    const world: World = await startWorld("overload", {
      provider: true,
      env: {
        MAX_CONCURRENT_REQUESTS: "2",
        MAX_QUEUED_REQUESTS: "2",
        REQUEST_QUEUE_TIMEOUT_MS: "3000",
        GATEWAY_TIMEOUT_MS: "20000",
        SHUTDOWN_GRACE_MS: "500"
      }
    })
    worlds.push(world)
    const org = await seedOrg(world.db)
    await topUp(world, org.orgId, 1_000n)
    const agent = await seedAgent(world.db, org.orgId, { mode: "live", monthlyBudgetCredits: 100_000n })
    const call = () =>
      request(`${world.server.url}/v1/call`, {
        method: "POST",
        headers: bearer(agent.key),
        body: { endpoint: "fakeprov/hang" }
      })

    const running = [call(), call()]
    // Both hold their places once the provider has them.
    await eventually(() => world.fake.seen.filter((seen) => seen.url.includes("/v1/hang")).length >= 2, {
      timeoutMs: 60_000,
      intervalMs: 20,
      what: "the provider receiving both calls"
    })
    let queuedSettled = 0
    const queued = [call(), call()].map((answer) => answer.finally(() => queuedSettled++))
    // Both are in the queue before the fifth arrives (observed on /readyz, not slept for).
    await eventually(async () => (await request(`${world.server.url}/readyz`)).json.requests.queued >= 2, {
      timeoutMs: 60_000,
      intervalMs: 20,
      what: "both calls queued"
    })
    // Over the queue limit: refused at once, while the queued ones still wait.
    expectUnavailable(await call(), /over capacity/)
    expect(queuedSettled).toBe(0)

    // The probes answer while the replica is saturated.
    expect((await request(`${world.server.url}/healthz`)).status).toBe(200)
    expect((await request(`${world.server.url}/readyz`)).json).toEqual({
      status: "ok",
      requests: { running: 2, queued: 2 }
    })

    // The queued calls wait at most the queue timeout, then answer 503 (holding nothing).
    for (const answer of await Promise.all(queued)) expectUnavailable(answer, /over capacity/)
    expect(world.fake.seen.filter((seen) => seen.url.includes("/v1/hang")).length).toBe(2)
    const [open] = await world.db.query(
      `SELECT count(*)::int AS n FROM ledger_holds WHERE org_id = $1 AND status = 'held'`,
      [org.orgId]
    )
    expect(open!.n).toBe(2)
    // The two running calls end when the world closes (past the short grace).
    void Promise.allSettled(running)
  }, 120_000)
})

describe("a queue longer than the pace can serve", () => {
  it("refuses at once what would only time out in the queue, instead of after the queue timeout", async () => {
    const world: World = await startWorld("overload_pace", {
      provider: true,
      env: { MAX_CONCURRENT_REQUESTS: "1", REQUEST_QUEUE_TIMEOUT_MS: "3000" }
    })
    worlds.push(world)
    const org = await seedOrg(world.db)
    await topUp(world, org.orgId, 10_000n)
    const agent = await seedAgent(world.db, org.orgId, { mode: "live", monthlyBudgetCredits: 100_000n })
    // One call at a time, 100 ms each: about 30 can be served within the queue timeout.
    const body = JSON.stringify({ endpoint: "fakeprov/slow" })
    const results = await openConnections({
      port: Number(new URL(world.server.url).port),
      count: 100,
      deadlineMs: 60_000,
      request: `POST /v1/call HTTP/1.1\r\nhost: service\r\nauthorization: Bearer ${agent.key}\r\n` +
        `content-type: application/json\r\ncontent-length: ${body.length}\r\n\r\n${body}`
    })
    const counts = tally(results)
    expect((counts["200"] ?? 0) + (counts["503"] ?? 0), JSON.stringify(counts)).toBe(100)
    expect(counts["200"]).toBeGreaterThan(0)
    expect(counts["503"]).toBeGreaterThan(0)
    // The refusals come early, while calls are still being served: the median refusal
    // arrives before the median success (waiting out the queue timeout, they came after).
    const arrivals = (status: number) =>
      results.filter((r) => r.outcome.kind === "answered" && r.outcome.status === status).map((r) => r.arrival)
        .sort((a, b) => a - b)
    const median = (values: Array<number>) => values[Math.floor(values.length / 2)]!
    expect(median(arrivals(503))).toBeLessThan(median(arrivals(200)))
  }, 120_000)
})

describe("an exhausted database pool", () => {
  it("answers 503 service_unavailable after DATABASE_ACQUIRE_TIMEOUT_MS, never 500", async () => {
    const world: World = await startWorld("overload_pool", {
      env: {
        DATABASE_POOL_SIZE: "1",
        DATABASE_ACQUIRE_TIMEOUT_MS: "300",
        TRUSTED_PROXIES: "127.0.0.1"
      }
    })
    worlds.push(world)
    // Another session locks the waitlist table: the first join waits on the lock while
    // holding the pool's only connection, so the second finds no connection free.
    const blocker = new pg.Client({ connectionString: world.db.url })
    await blocker.connect()
    try {
      await blocker.query("BEGIN")
      await blocker.query("LOCK TABLE waitlist IN ACCESS EXCLUSIVE MODE")
      const join = (n: number) =>
        request(`${world.server.url}/v1/waitlist`, {
          method: "POST",
          headers: { "x-forwarded-for": `203.0.113.${n}` },
          body: { email: `pool-${n}@example.com` }
        })
      const first = join(1)
      // Wait until the first join is waiting on the lock (seen in pg_locks), not a fixed time.
      await eventually(async () => {
        const { rows } = await blocker.query(
          "SELECT count(*)::int AS n FROM pg_locks WHERE relation = 'waitlist'::regclass AND NOT granted"
        )
        return rows[0].n > 0
      }, { timeoutMs: 60_000, intervalMs: 20, what: "the first join waiting on the lock" })
      expectUnavailable(await join(2), /no database connection came free/)
      await blocker.query("ROLLBACK")
      expect((await first).status).toBe(202)
    } finally {
      await blocker.end()
    }
  }, 120_000)
})
