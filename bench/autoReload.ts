import { loadavg } from "node:os"
import pg from "pg"
import { seedAgent, seedOrg } from "../test/support/fixtures.js"
import { formatRow, type LoadResult, runLoad } from "./support/load.js"
import {
  createBenchDatabase,
  fixturesOf,
  seedBenchEndpoint,
  startBenchProvider,
  startService
} from "./support/service.js"

/**
 * Does auto-reload slow a gateway call? The same closed loop of live `POST /v1/call`s, in
 * one run, alternating rounds with auto-reload off and on for every org (the development
 * payment sandbox charges the saved card). With it on, every settlement wakes the
 * auto-reload worker, which looks for orgs under their threshold; the thresholds sit so
 * that each org crosses once during the "on" rounds and is reloaded. Figures: calls a
 * second and p50 / p99 of each round, and the ratio on / off.
 */
const ROUND_MS = Number(process.env.BENCH_DURATION_MS ?? 5_000)
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 3)
const ORGS = 8
const AGENTS_PER_ORG = 8
const CONNECTIONS = 32

const startProvider = () => startBenchProvider({ ok: true })

const median = (values: Array<number>) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]!

export const run = async () => {
  const db = await createBenchDatabase()
  const provider = await startProvider()
  // No Stripe keys: the development sandbox is the payment provider.
  const service = await startService({
    DATABASE_URL: db.url,
    PROVIDERS_UPSTREAM: provider.url,
    BILLING_WORKER_INTERVAL_MS: "1000"
  })
  const pool = new pg.Pool({ connectionString: db.url, max: 4 })
  const database = fixturesOf(pool)
  try {
    await seedBenchEndpoint(pool, { id: "benchprov/ok", name: "Ok", category: "utilities", path: "/v1/ok" })
    const orgIds: Array<string> = []
    const keys: Array<string> = []
    for (let o = 0; o < ORGS; o++) {
      const org = await seedOrg(database)
      orgIds.push(org.orgId)
      // Funded as a paid top-up would leave it, with the sandbox card saved.
      await pool.query(
        `INSERT INTO org_balances (org_id, balance, funded, updated_at) VALUES ($1, 100000000, true, now())`,
        [org.orgId]
      )
      await pool.query(
        `INSERT INTO ledger_entries (id, org_id, kind, amount, credits, note, created_at)
         VALUES (gen_random_uuid(), $1, 'top_up', 100000000, 100000000, 'bench', now())`,
        [org.orgId]
      )
      await pool.query(
        `INSERT INTO billing_profiles (org_id, customer_id, card_payment_method_id, card_brand, card_last4, updated_at)
         VALUES ($1, 'cus_sandbox_bench', 'pm_sandbox_succeeds_4242_bench', 'visa', '4242', now())`,
        [org.orgId]
      )
      for (let a = 0; a < AGENTS_PER_ORG; a++) {
        keys.push((await seedAgent(database, org.orgId, { mode: "live", monthlyBudgetCredits: 100_000_000n })).key)
      }
    }
    const call = (i: number) => ({
      method: "POST",
      headers: { authorization: `Bearer ${keys[i % keys.length]}` },
      body: JSON.stringify({ endpoint: "benchprov/ok" })
    })
    const url = `${service.url}/v1/call`
    await runLoad({ url, durationMs: 3_000, connections: 16, request: (i) => call(i + 90_000_000) })

    const setAutoReload = async (on: boolean) => {
      // On: each org is reloaded once it has spent about 300 more credits.
      await pool.query(
        `UPDATE billing_profiles p SET auto_reload_enabled = $1,
           auto_reload_threshold_credits = (SELECT balance - 300 FROM org_balances b WHERE b.org_id = p.org_id),
           auto_reload_amount_credits = 100000, auto_reload_failures = 0, auto_reload_next_attempt_at = NULL`,
        [on]
      )
    }
    const off: Array<LoadResult> = []
    const on: Array<LoadResult> = []
    let offset = 0
    for (let round = 0; round < ROUNDS; round++) {
      for (const enabled of [false, true]) {
        await setAutoReload(enabled)
        const result = await runLoad({
          url,
          durationMs: ROUND_MS,
          connections: CONNECTIONS,
          request: (i) => call(i + offset)
        })
        offset += 10_000_000
        ;(enabled ? on : off).push(result)
        console.log(formatRow(`  round ${round + 1}, auto-reload ${enabled ? "on " : "off"}`, result))
      }
    }
    await setAutoReload(false)
    const [{ reloads }] = (await pool.query(
      `SELECT count(*)::int AS reloads FROM payments WHERE purpose = 'auto_reload' AND status = 'succeeded'`
    )).rows
    const [{ broken }] = (await pool.query(
      `SELECT count(*)::int AS broken FROM org_balances b
       WHERE b.balance <> (SELECT COALESCE(SUM(amount), 0) FROM ledger_entries e WHERE e.org_id = b.org_id)`
    )).rows
    const rpsOff = median(off.map((r) => r.rps))
    const rpsOn = median(on.map((r) => r.rps))
    console.log(
      `\nGateway calls with auto-reload off and on (${ORGS} orgs x ${AGENTS_PER_ORG} live agents, ${CONNECTIONS} connections, ${ROUNDS} rounds of ${
        ROUND_MS / 1000
      } s each)`
    )
    console.log(
      `  median calls/s: off ${rpsOff.toFixed(0)}, on ${rpsOn.toFixed(0)} (ratio on/off ${(rpsOn / rpsOff).toFixed(2)})`
    )
    console.log(
      `  median p50: off ${median(off.map((r) => r.p50)).toFixed(1)} ms, on ${
        median(on.map((r) => r.p50)).toFixed(1)
      } ms`
    )
    console.log(
      `  median p99: off ${median(off.map((r) => r.p99)).toFixed(1)} ms, on ${
        median(on.map((r) => r.p99)).toFixed(1)
      } ms`
    )
    console.log(`  errors: off ${off.reduce((n, r) => n + r.errors, 0)}, on ${on.reduce((n, r) => n + r.errors, 0)}`)
    console.log(`  auto-reload charges made: ${reloads}; orgs whose entries do not sum to the balance: ${broken}`)
    console.log(`  load average at the end: ${loadavg().map((l) => l.toFixed(2)).join(", ")}`)
  } finally {
    await pool.end()
    await service.stop()
    provider.close()
    await db.drop()
  }
}
