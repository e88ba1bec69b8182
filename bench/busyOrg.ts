import * as os from "node:os"
import pg from "pg"
import { alternate, printAlternation } from "./support/alternate.js"
import { runLoad } from "./support/load.js"
import {
  benchPersonAnswer,
  benchPersonEndpoint,
  createBenchDatabase,
  gatewayCallsOf,
  seedBenchEndpoint,
  seedLiveAgentKeys,
  startBenchProvider,
  startService
} from "./support/service.js"

/**
 * One busy org against many small ones, on one service as shipped: 64 live agents of one
 * org (every hold and settlement touches that org's balance row) against 64 agents spread
 * over 64 orgs, the same closed loop in alternating slices (support/alternate.ts), so the
 * ratio is read slice pair by slice pair in one run. Target: the single org at least 0.8x.
 * After the run, each org's balance is checked against its ledger entries: nothing the
 * load did may leave a credit unaccounted for.
 */
const AGENTS = 64
const CONNECTIONS = Number(process.env.BENCH_CONNECTIONS ?? 64)

export const run = async () => {
  const slices = Number(process.env.BENCH_SLICES ?? 10)
  const sliceMs = Number(process.env.BENCH_SLICE_MS ?? 3_000)
  const db = await createBenchDatabase()
  const provider = await startBenchProvider(benchPersonAnswer)
  const service = await startService({ DATABASE_URL: db.url, PROVIDERS_UPSTREAM: provider.url })
  const pool = new pg.Pool({ connectionString: db.url, max: 2 })
  try {
    await seedBenchEndpoint(pool, benchPersonEndpoint)
    const busy = gatewayCallsOf(await seedLiveAgentKeys(db.url, 1, AGENTS))
    const spread = gatewayCallsOf(await seedLiveAgentKeys(db.url, AGENTS, 1))
    const url = `${service.url}/v1/call`
    const pids = [service.process.pid!]
    for (const request of [busy, spread]) await runLoad({ url, request, durationMs: 2_000, connections: 16 })
    const loadBefore = os.loadavg()[0]!
    const outcome = await alternate([
      { name: `one org, ${AGENTS} agents`, url, pids, request: busy },
      { name: `${AGENTS} orgs, one agent each`, url, pids, request: spread }
    ], { slices, sliceMs, connections: CONNECTIONS })
    console.log(
      `\nPOST /v1/call, one busy org against ${AGENTS} orgs (${CONNECTIONS} connections, ${slices} slices of ${sliceMs} ms)`
    )
    printAlternation(outcome, { rate: "calls/s", each: "a call" }, loadBefore)
    console.log(`target: one org at least 0.8x; ${outcome.ratio.median >= 0.8 ? "met" : "NOT MET"}`)
    const [{ open }] = (await pool.query(`SELECT count(*)::int AS open FROM ledger_holds WHERE status = 'held'`)).rows
    const mismatched = (await pool.query(
      `SELECT b.org_id FROM org_balances b
       WHERE b.balance <> (SELECT COALESCE(SUM(e.amount), 0) FROM ledger_entries e WHERE e.org_id = b.org_id)`
    )).rowCount
    console.log(`Open holds after the run: ${open}; orgs whose balance differs from their entries: ${mismatched}`)
  } finally {
    await pool.end()
    await service.stop()
    provider.close()
    await db.drop()
  }
}
