import * as os from "node:os"
import pg from "pg"
import { alternate, printAlternation, type Side } from "./support/alternate.js"
import { runLoad } from "./support/load.js"
import {
  benchPersonAnswer,
  createBenchDatabase,
  type RunningService,
  seedGatewayCalls,
  startBenchProvider,
  startReadyChild,
  startService
} from "./support/service.js"

/**
 * More than one process on the gateway, each against one, as shipped (default settings),
 * sharing one PostgreSQL and one Redis, 128 live keys over 16 orgs:
 * 1. replicas: two service processes on their own ports behind a loopback TCP balancer
 *    (support/tcpBalancer.ts, a process of its own), against one process behind the same
 *    kind of balancer, so both sides pay the balancer's copy;
 * 2. WORKER_PROCESSES=2 (two workers sharing one port) against WORKER_PROCESSES=1.
 * Each pair runs the closed loop in alternating slices (support/alternate.ts), the two
 * sides' ratio read slice pair by slice pair. Target: both at least 1.6x on the 2-core
 * machine. CPU per call sums every process of a side (workers included).
 */
const ORGS = Number(process.env.BENCH_ORGS ?? 16)
const AGENTS_PER_ORG = 8
const CONNECTIONS = Number(process.env.BENCH_CONNECTIONS ?? 64)
const REDIS_URL = process.env.BENCH_REDIS_URL ?? "redis://127.0.0.1:6379"

const hostPort = (service: RunningService) => new URL(service.url).host

export const run = async () => {
  const slices = Number(process.env.BENCH_SLICES ?? 10)
  const sliceMs = Number(process.env.BENCH_SLICE_MS ?? 3_000)
  const db = await createBenchDatabase()
  const provider = await startBenchProvider(benchPersonAnswer)
  const common = { DATABASE_URL: db.url, PROVIDERS_UPSTREAM: provider.url, REDIS_URL }
  const services: Array<RunningService> = []
  const balancers: Array<Awaited<ReturnType<typeof startReadyChild>>> = []
  const pool = new pg.Pool({ connectionString: db.url, max: 2 })
  try {
    // One after the other: the first migrates the database.
    for (const env of [{}, {}, { WORKER_PROCESSES: "2" }] as Array<Record<string, string>>) {
      services.push(await startService({ ...common, ...env }))
    }
    const [first, second, workers] = services as [RunningService, RunningService, RunningService]
    const { call } = await seedGatewayCalls(pool, db.url, ORGS, AGENTS_PER_ORG)
    const balancer = async (behind: ReadonlyArray<RunningService>) => {
      const started = await startReadyChild(["--import", "tsx", "bench/support/tcpBalancer.ts"], {
        BALANCER_TARGETS: behind.map(hostPort).join(",")
      })
      balancers.push(started)
      return `${started.url}/v1/call`
    }
    const side = (name: string, url: string, behind: ReadonlyArray<RunningService>): Side => ({
      name,
      url,
      pids: behind.map((service) => service.process.pid!),
      request: call
    })
    const pairs: Array<readonly [Side, Side]> = [
      [
        side("two replicas behind the balancer", await balancer([first, second]), [first, second]),
        side("one replica behind the balancer", await balancer([first]), [first])
      ],
      [
        side("WORKER_PROCESSES=2", `${workers.url}/v1/call`, [workers]),
        side("one process", `${first.url}/v1/call`, [first])
      ]
    ]
    for (const pair of pairs) {
      for (const warmed of pair) await runLoad({ ...warmed, durationMs: 2_000, connections: CONNECTIONS })
      const loadBefore = os.loadavg()[0]!
      const outcome = await alternate(pair, { slices, sliceMs, connections: CONNECTIONS })
      console.log(`\nPOST /v1/call (${CONNECTIONS} connections, ${slices} slices of ${sliceMs} ms each)`)
      printAlternation(outcome, { rate: "calls/s", each: "a call" }, loadBefore)
      console.log(
        `target: at least 1.6x on ${os.cpus().length} cores; ${outcome.ratio.median >= 1.6 ? "met" : "NOT MET"}`
      )
    }
    const [{ open }] = (await pool.query(`SELECT count(*)::int AS open FROM ledger_holds WHERE status = 'held'`)).rows
    console.log(`Open holds after the run: ${open}`)
  } finally {
    for (const started of balancers) started.child.kill("SIGTERM")
    await pool.end()
    for (const service of services) await service.stop()
    provider.close()
    await db.drop()
  }
}
