import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { type Buyer, seedBuyer } from "../Purchasing/support.js"
import { type FakeProvider, seedTestCatalogue, startFakeProvider } from "../support/fakeProvider.js"
import { bearer, seedAgent, type SeededAgent, seedOrg } from "../support/fixtures.js"
import { invariants } from "../support/ledgerChecks.js"
import { type PrivatePostgres, startPrivatePostgres } from "../support/privatePostgres.js"
import { type PrivateRedis, startPrivateRedis } from "../support/privateRedis.js"
import { startReceiver, type TestReceiver } from "../support/receiver.js"
import { startServer, type TestServer } from "../support/server.js"
import { benchmarkedToday, eventually, type LedgerRuntime, ledgerRuntime, topUp } from "../support/world.js"
import { orgApi } from "../Webhooks/support.js"

/**
 * PostgreSQL, then Redis, restarted under load (gateway calls, purchases, a running job,
 * webhook deliveries of the buyer's events):
 * requests during the outage answer 503 `service_unavailable` quickly (never a 500), the
 * service recovers by itself, and no credit is lost or doubled. Both are private servers of
 * this suite, never the shared ones.
 */
let postgres: PrivatePostgres
let redis: PrivateRedis
let fake: FakeProvider
let server: TestServer
let ledger: LedgerRuntime
const INITIAL = 1_000_000n
let caller: { orgId: string; agents: Array<SeededAgent> }
let buyer: Buyer
let receiver: TestReceiver
const cleanups: Array<() => Promise<unknown>> = []

beforeAll(async () => {
  postgres = await startPrivatePostgres()
  cleanups.push(() => postgres.close())
  redis = await startPrivateRedis()
  cleanups.push(() => redis.close())
  fake = await startFakeProvider()
  cleanups.push(() => fake.close())
  receiver = await startReceiver()
  cleanups.push(() => receiver.close())
  server = await startServer({
    DATABASE_URL: postgres.db.url,
    REDIS_URL: redis.url,
    PROVIDERS_UPSTREAM: fake.url,
    GATEWAY_TIMEOUT_MS: "2000",
    DATABASE_ACQUIRE_TIMEOUT_MS: "1000",
    LEDGER_SWEEP_INTERVAL_MS: "500",
    JOB_POLL_INTERVAL_MS: "100",
    MOCK_TOOL_LATENCY_MS: "20",
    BENCHMARK_EVERY_DAYS: "0",
    LOG_LEVEL: "Error"
  })
  cleanups.push(() => server.close())
  await seedTestCatalogue(postgres.db)
  await benchmarkedToday(postgres.db)
  ledger = ledgerRuntime(postgres.db)
  cleanups.push(() => ledger.dispose())
  const org = await seedOrg(postgres.db)
  await topUp({ ledger }, org.orgId, INITIAL)
  caller = {
    orgId: org.orgId,
    agents: await Promise.all(
      [1, 2, 3].map(() => seedAgent(postgres.db, org.orgId, { mode: "live", monthlyBudgetCredits: INITIAL }))
    )
  }
  buyer = await seedBuyer({ db: postgres.db })
  await topUp({ ledger }, buyer.org.orgId, INITIAL)
  // Every event of the buyer's org is delivered to the receiver.
  const webhook = await orgApi(server.url, buyer.org.orgId, buyer.org.owner.sessionToken).createWebhook({
    url: receiver.url
  })
  expect(webhook.status).toBe(201)
}, 120_000)

afterAll(async () => {
  for (const cleanup of cleanups.reverse()) await cleanup().catch(() => undefined)
})

interface Answer {
  readonly status: number
  readonly code: string | undefined
  readonly ms: number
  readonly at: number
}

/** Gateway calls and purchases from a few concurrent clients until `stop`; every answer recorded. */
const load = () => {
  const answers: Array<Answer> = []
  let running = true
  const send = (key: string, path: string, body: unknown) =>
    fetch(`${server.url}${path}`, {
      method: "POST",
      headers: { ...bearer(key), "content-type": "application/json" },
      body: JSON.stringify(body)
    }).then(
      async (r) => ({ status: r.status, code: (await r.json().catch(() => undefined))?.error?.code }),
      () => ({ status: 0, code: "network" })
    )
  const client = async (i: number) => {
    for (let n = 0; running; n++) {
      const started = Date.now()
      const answer = i < 5
        ? await send(caller.agents[i % 3]!.key, "/v1/call", { endpoint: n % 2 === 0 ? "fakeprov/ok" : "fakeprov/slow" })
        : await send(buyer.agent.key, "/v1/execute", {
          tool: "jina-reader",
          inputs: [{ url: `https://news.example.com/${i}/${n}` }]
        })
      answers.push({ ...answer, ms: Date.now() - started, at: Date.now() })
    }
  }
  const clients = Promise.all(Array.from({ length: 6 }, (_, i) => client(i)))
  return {
    answers,
    stop: async () => {
      running = false
      await clients
    }
  }
}

const summary = (answers: ReadonlyArray<Answer>) => {
  const counts: Record<string, number> = {}
  for (const a of answers) {
    const key = a.code === undefined ? String(a.status) : `${a.status} ${a.code}`
    counts[key] = (counts[key] ?? 0) + 1
  }
  return counts
}

/** The money of an org adds up: every hold ended, entries sum to the balance, and what was captured left it. */
const expectCreditsAccounted = async (orgId: string) => {
  await eventually(async () => {
    const [open] = await postgres.db.query(
      `SELECT (SELECT count(*)::int FROM ledger_holds WHERE org_id = $1 AND status = 'held') AS holds,
              (SELECT count(*)::int FROM gateway_calls WHERE org_id = $1 AND status = 'pending') AS calls`,
      [orgId]
    )
    return open.holds === 0 && open.calls === 0
  }, { timeoutMs: 60_000, what: "every hold settled or released" })
  const inv = await invariants(postgres.db, orgId)
  expect(inv.entriesSum).toBe(inv.balance)
  expect(inv.mismatchedHolds).toBe(0)
  expect(inv.negativeBudgets).toBe(0)
  // Test-mode holds (a test agent's purchases) are counted but never leave the balance.
  const [captured] = await postgres.db.query(
    `SELECT COALESCE(SUM(captured) FILTER (WHERE NOT test_mode), 0)::text AS live,
            COALESCE(SUM(captured), 0)::text AS all
     FROM ledger_holds WHERE org_id = $1`,
    [orgId]
  )
  expect(inv.balance + BigInt(captured.live)).toBe(INITIAL)
  const [spend] = await postgres.db.query(
    `SELECT COALESCE(SUM(held), 0)::text AS held FROM agent_month_spend WHERE org_id = $1`,
    [orgId]
  )
  expect(spend.held).toBe("0")
  return { live: BigInt(captured.live), all: BigInt(captured.all) }
}

describe("PostgreSQL restarted under load", () => {
  it(
    "answers 503 service_unavailable quickly meanwhile, recovers by itself, and loses or doubles no credit",
    async () => {
      // A job of 300 inputs (20 ms each) runs across the outage.
      const job = await fetch(`${server.url}/v1/execute`, {
        method: "POST",
        headers: { ...bearer(buyer.agent.key), "content-type": "application/json" },
        body: JSON.stringify({
          tool: "jina-reader",
          inputs: Array.from({ length: 300 }, (_, i) => ({ url: `https://news.example.com/job/${i}` }))
        })
      }).then((r) => r.json())
      expect(job.job_id, JSON.stringify(job)).toEqual(expect.any(String))

      const traffic = load()
      await eventually(() => traffic.answers.filter((a) => a.status === 200).length >= 20, { what: "calls served" })
      await postgres.stop()
      const outageFrom = traffic.answers.length
      await eventually(() => traffic.answers.length >= outageFrom + 40, {
        timeoutMs: 60_000,
        what: "answers during the outage"
      })
      const during = traffic.answers.slice(outageFrom)
      await postgres.start()
      const back = Date.now()
      await eventually(
        () => traffic.answers.filter((a) => a.at > back && a.status === 200).length >= 20,
        { timeoutMs: 30_000, what: "calls served again" }
      )
      await traffic.stop()

      // Meanwhile: 503 service_unavailable, answered quickly (bound generous for a busy machine).
      expect(summary(during), JSON.stringify(summary(traffic.answers))).toEqual({
        "503 service_unavailable": during.length
      })
      expect(Math.max(...during.map((a) => a.ms))).toBeLessThan(10_000)
      expect(traffic.answers.filter((a) => a.status === 500)).toEqual([])

      // The job, interrupted by the outage, runs to its end.
      const finished = await eventually(async () => {
        const answer = await fetch(`${server.url}/v1/jobs/${job.job_id}`, { headers: bearer(buyer.agent.key) })
        const body = answer.status === 200 ? await answer.json() : undefined
        return body?.job.status === "done" && body.job
      }, { timeoutMs: 60_000, what: "the job to finish" })
      expect(finished.progress).toEqual({ done: 300, total: 300 })

      const called = await expectCreditsAccounted(caller.orgId)
      const [charged] = await postgres.db.query(
        `SELECT COALESCE(SUM(charged_credits), 0)::text AS sum FROM gateway_calls WHERE org_id = $1`,
        [caller.orgId]
      )
      expect(BigInt(charged.sum)).toBe(called.live)
      // Each purchased item charged once: what the receipts say is what the holds captured.
      const bought = (await expectCreditsAccounted(buyer.org.orgId)).all
      const [receipts] = await postgres.db.query(
        `SELECT COALESCE(SUM(i.cost_credits), 0)::text AS sum FROM receipt_items i
       JOIN receipts r ON r.id = i.receipt_id WHERE r.agent_id = $1`,
        [buyer.agent.agentId]
      )
      expect(BigInt(receipts.sum)).toBe(bought)
    },
    180_000
  )
})

describe("Redis restarted under load", () => {
  it("keeps answering (limits counted in memory meanwhile) and goes back to Redis by itself", async () => {
    const storeState = async () => (await (await fetch(`${server.url}/v1/status`)).json()).rate_limits.store as string
    expect(await storeState()).toBe("redis")
    const traffic = load()
    await eventually(() => traffic.answers.filter((a) => a.status === 200).length >= 20, { what: "calls served" })
    await redis.kill()
    const outageFrom = traffic.answers.length
    await eventually(() => traffic.answers.length >= outageFrom + 40, {
      timeoutMs: 60_000,
      what: "answers during the outage"
    })
    expect(await storeState()).toBe("memory_fallback")
    const during = traffic.answers.slice(outageFrom)
    await redis.start()
    await eventually(async () => (await storeState()) === "redis", {
      timeoutMs: 60_000,
      what: "rate limits back in Redis"
    })
    await traffic.stop()
    expect(summary(during)).toEqual({ "200": during.length })
    expect(traffic.answers.filter((a) => a.status === 500)).toEqual([])
    await expectCreditsAccounted(caller.orgId)
  }, 120_000)
})
