import pg from "pg"
import { formatRow, type LoadResult, runLoad } from "./support/load.js"
import {
  createBenchDatabase,
  seedBenchEndpoint,
  seedLiveAgentKeys,
  startBenchProvider,
  startService
} from "./support/service.js"

/**
 * The gateway against a loopback fake provider, in one run:
 * 1. at a fixed 300 calls a second, `POST /v1/call` (live key: auth, rate limit, price,
 *    quota, hold, forward, capture) versus the same requests sent straight to the
 *    provider; the difference is the gateway's added latency (targets: p50 <= 5 ms,
 *    p99 <= 20 ms);
 * 2. closed loop, as many live calls a second as the service answers (target: >= 1,000,
 *    no errors), each with its hold and capture.
 * Calls come from BENCH_ORGS orgs (default 8) with 8 live agents each, so the agent keys'
 * 600-a-minute limit is never what is measured.
 */
const DURATION_MS = Number(process.env.BENCH_DURATION_MS ?? 10_000)
const ORGS = Number(process.env.BENCH_ORGS ?? 8)
const AGENTS_PER_ORG = 8
const RATE = 300
const CONNECTIONS = Number(process.env.BENCH_CONNECTIONS ?? 64)

const startProvider = () => startBenchProvider({ ok: true, person: { name: "Ada Lovelace", email: "ada@example.com" } })

const summary = (label: string, result: LoadResult) =>
  `${formatRow(label, result)}   statuses ${JSON.stringify(result.statuses)}`

export const run = async () => {
  const db = await createBenchDatabase()
  const provider = await startProvider()
  const service = await startService({
    DATABASE_URL: db.url,
    PROVIDERS_UPSTREAM: provider.url
  }).catch(async (error) => {
    provider.close()
    await db.drop()
    throw error
  })
  const pool = new pg.Pool({ connectionString: db.url, max: 4 })
  try {
    await seedBenchEndpoint(pool, { id: "benchprov/person", name: "Person", category: "people", path: "/v1/person" })
    const keys = await seedLiveAgentKeys(db.url, ORGS, AGENTS_PER_ORG)
    const viaGateway = (i: number) => ({
      method: "POST",
      headers: { authorization: `Bearer ${keys[i % keys.length]}` },
      body: JSON.stringify({ endpoint: "benchprov/person", query: { email: `user${i}@example.com` } })
    })
    const gatewayUrl = `${service.url}/v1/call`
    const directUrl = `${provider.url}/benchprov/v1/person`

    // Warm-up: JIT, connection pools, the endpoint cache.
    await runLoad({ url: gatewayUrl, durationMs: 3_000, connections: 16, request: (i) => viaGateway(i + 10_000_000) })
    await runLoad({ url: directUrl, durationMs: 1_000, connections: 16 })

    const direct300 = await runLoad({ url: directUrl, durationMs: DURATION_MS, connections: 64, ratePerSecond: RATE })
    const gateway300 = await runLoad({
      url: gatewayUrl,
      durationMs: DURATION_MS,
      connections: 64,
      ratePerSecond: RATE,
      request: (i) => viaGateway(i + 20_000_000)
    })
    // A rate this machine's service sustains, to show the added latency unsaturated.
    const direct100 = await runLoad({ url: directUrl, durationMs: DURATION_MS, connections: 64, ratePerSecond: 100 })
    const gateway100 = await runLoad({
      url: gatewayUrl,
      durationMs: DURATION_MS,
      connections: 64,
      ratePerSecond: 100,
      request: (i) => viaGateway(i + 40_000_000)
    })
    const directMax = await runLoad({ url: directUrl, durationMs: DURATION_MS, connections: CONNECTIONS })
    const gatewayMax = await runLoad({
      url: gatewayUrl,
      durationMs: DURATION_MS,
      connections: CONNECTIONS,
      request: (i) => viaGateway(i + 30_000_000)
    })

    // The ceiling of the stack on this machine: an agent-key request doing one statement.
    const agentMax = await runLoad({
      url: `${service.url}/v1/agent`,
      durationMs: DURATION_MS,
      connections: CONNECTIONS,
      request: (i) => ({ method: "GET", headers: { authorization: `Bearer ${keys[i % keys.length]}` } })
    })

    const [{ calls, charged }] = (await pool.query(
      `SELECT count(*)::int AS calls, COALESCE(SUM(charged_credits), 0)::text AS charged FROM gateway_calls WHERE status = 'succeeded'`
    )).rows
    const [{ open }] = (await pool.query(`SELECT count(*)::int AS open FROM ledger_holds WHERE status = 'held'`)).rows

    console.log(
      `\nGateway vs direct provider (${ORGS} orgs x ${AGENTS_PER_ORG} live agents, ${DURATION_MS / 1000} s each)`
    )
    console.log(`At ${RATE} calls/s:`)
    console.log(summary("  direct to provider", direct300))
    console.log(summary("  via POST /v1/call", gateway300))
    const addedP50 = gateway300.p50 - direct300.p50
    const addedP99 = gateway300.p99 - direct300.p99
    console.log(
      `  added latency: p50 ${addedP50.toFixed(2)} ms (target <= 5), p99 ${addedP99.toFixed(2)} ms (target <= 20) -> ${
        addedP50 <= 5 && addedP99 <= 20 ? "met" : "NOT met"
      }`
    )
    console.log("At 100 calls/s:")
    console.log(summary("  direct to provider", direct100))
    console.log(summary("  via POST /v1/call", gateway100))
    console.log(
      `  added latency: p50 ${(gateway100.p50 - direct100.p50).toFixed(2)} ms, p99 ${
        (gateway100.p99 - direct100.p99).toFixed(2)
      } ms`
    )
    console.log(`Closed loop, ${CONNECTIONS} connections:`)
    console.log(summary("  direct to provider", directMax))
    console.log(summary("  via POST /v1/call (hold+capture)", gatewayMax))
    console.log(
      `  live calls/s: ${gatewayMax.rps.toFixed(0)} (target >= 1000, no errors) -> ${
        gatewayMax.rps >= 1000 && gatewayMax.errors === 0 ? "met" : "NOT met"
      }`
    )
    console.log(summary("  GET /v1/agent (agent key, one statement)", agentMax))
    console.log(`Ledger after the run: ${calls} calls charged ${charged} credits; open holds ${open}`)
  } finally {
    await pool.end()
    await service.stop()
    provider.close()
    await db.drop()
  }
}
