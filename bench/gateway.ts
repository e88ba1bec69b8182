import type { ChildProcess } from "node:child_process"
import * as os from "node:os"
import pg from "pg"
import { alternate, printAlternation, type Side } from "./support/alternate.js"
import { postgresCpuMsBetween, postgresTicks, processCpuMs } from "./support/cpu.js"
import { formatRow, type LoadResult, runLoad } from "./support/load.js"
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
 * A gateway call of the service against the reference gateway (bench/support/
 * referenceGateway.ts: the same essential work on the same schema, plain node:http + pg)
 * and the provider alone, side by side in one run:
 * 1. closed loop, three rounds, medians: calls a second, and per call the CPU of the
 *    gateway's process and of PostgreSQL (from /proc); then, once per gateway, the
 *    statements it sends (as it counts them: the service's `db_statements_total`, the
 *    reference's own count), the transactions PostgreSQL commits and the rows it writes per
 *    call (from its statistics, read after they have settled), each less the background
 *    workers' own in an idle window;
 * 2. at 20 and 100 calls a second: the latency each gateway adds to the provider's.
 * A second service with DATABASE_PREPARED_STATEMENTS=false runs the closed loop too, so the
 * effect of prepared statements is read in the same run; and the minimal Effect gateway
 * (bench/support/minimalEffectGateway.ts: the reference's work on the service's stack, no
 * more), so what the stack itself costs is read beside what the service adds to it.
 * The services run as shipped (default settings: access log on, metrics on, LOG_LEVEL
 * Info). Targets: throughput at least 0.85x the minimal Effect gateway's and at least 0.55x
 * the reference's; PostgreSQL CPU per call at most the reference's; added latency at 20/s p50
 * within 1 ms of the reference's (read cold and warm, see below). Calls come from
 * BENCH_ORGS orgs (default 16) with 8 live agents each (128 keys) over BENCH_CONNECTIONS (64),
 * so the agent keys' 600-a-minute limit is never what is measured.
 *
 * With BENCH_COMPARE_DIR (another checkout of the project, e.g. `git worktree add
 * ../before <commit>` with node_modules linked), this checkout's service and that one's run
 * the closed loop side by side in alternating slices instead (support/alternate.ts:
 * BENCH_SLICES, default 10, of BENCH_SLICE_MS, default 3,000), each on its own database,
 * and the ratio between them is printed: a lever worth 10% is lost in this machine's drift
 * between separate runs. With BENCH_VARIANTS (JSON: a name for each set of settings), the
 * service as shipped runs against itself with each set in turn, the same way, to price a
 * default: '{"access log off":{"ACCESS_LOG":"false"}}'. BENCH_SERVICE_ENV (JSON) adds
 * settings to every service started.
 */
const DURATION_MS = Number(process.env.BENCH_DURATION_MS ?? 5_000)
const RATE_DURATION_MS = Number(process.env.BENCH_RATE_DURATION_MS ?? 8_000)
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 3)
const ORGS = Number(process.env.BENCH_ORGS ?? 16)
const AGENTS_PER_ORG = 8
const CONNECTIONS = Number(process.env.BENCH_CONNECTIONS ?? 64)

const median = (values: ReadonlyArray<number>) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]!

/** What PostgreSQL has committed and written so far in the bench's database. */
const databaseWork = async (pool: pg.Pool) => {
  const [row] = (await pool.query(
    `SELECT d.xact_commit::bigint AS commits,
            (SELECT COALESCE(SUM(n_tup_ins + n_tup_upd + n_tup_del), 0) FROM pg_stat_user_tables)::bigint AS rows
     FROM pg_stat_database d WHERE d.datname = current_database()`
  )).rows
  return { commits: Number(row.commits), rows: Number(row.rows) }
}

/** Opens the services' `/metrics`, where their statement counts are read. */
const METRICS_TOKEN = "bench-metrics"

/** A counter of a service's `/metrics` so far. */
const serviceCounter = (url: string, name: string) => async () => {
  const text = await (await fetch(`${url}/metrics`, { headers: { authorization: `Bearer ${METRICS_TOKEN}` } })).text()
  const line = new RegExp(`^${name} (\\d+)`, "m").exec(text)
  if (line === null) throw new Error(`the service's /metrics has no ${name}`)
  return Number(line[1])
}

/** The statements a service has sent so far (its `db_statements_total`). */
const serviceStatements = (url: string) => serviceCounter(url, "db_statements_total")

/** The round trips a service has made to PostgreSQL so far (its `db_round_trips_total`). */
const serviceRoundTrips = (url: string) => serviceCounter(url, "db_round_trips_total")

/** The statements the reference gateway has sent so far. */
const referenceStatements = (url: string) => async () =>
  ((await (await fetch(`${url}/statements`)).json()) as { statements: number }).statements

interface Measured {
  readonly load: LoadResult
  readonly cpuMsPerCall: number
  readonly postgresMsPerCall: number
}

/** Idle backends hand in their statistics within PostgreSQL's 10 s idle interval. */
const STATS_SETTLE_MS = 11_000

/** A service to run side by side: its name, its settings beyond the shipped defaults, its checkout. */
interface SideSpec {
  readonly name: string
  readonly env: Record<string, string>
  readonly checkout?: string | undefined
}

/**
 * Services side by side, closed loop in alternating slices, the first against each of the
 * others in turn: this checkout's against another's (BENCH_COMPARE_DIR), or the service as
 * shipped against itself with settings changed (BENCH_VARIANTS), to price one default.
 */
const runSideBySide = async (specs: ReadonlyArray<SideSpec>) => {
  const slices = Number(process.env.BENCH_SLICES ?? 10)
  const sliceMs = Number(process.env.BENCH_SLICE_MS ?? 3_000)
  const provider = await startBenchProvider(benchPersonAnswer)
  const started: Array<
    { db: Awaited<ReturnType<typeof createBenchDatabase>>; service: RunningService; pool: pg.Pool }
  > = []
  try {
    const sides: Array<Side> = []
    for (const spec of specs) {
      const db = await createBenchDatabase()
      const service = await startService({
        DATABASE_URL: db.url,
        PROVIDERS_UPSTREAM: provider.url,
        ...JSON.parse(process.env.BENCH_SERVICE_ENV ?? "{}"),
        ...spec.env
      }, spec.checkout)
      const pool = new pg.Pool({ connectionString: db.url, max: 4 })
      started.push({ db, service, pool })
      const { call } = await seedGatewayCalls(pool, db.url, ORGS, AGENTS_PER_ORG)
      await runLoad({ url: `${service.url}/v1/call`, durationMs: 2_000, connections: 16, request: call })
      sides.push({ name: spec.name, url: `${service.url}/v1/call`, pids: [service.process.pid!], request: call })
    }
    for (const other of sides.slice(1)) {
      const loadBefore = os.loadavg()[0]!
      const outcome = await alternate([sides[0]!, other], { slices, sliceMs, connections: CONNECTIONS })
      console.log(`\nPOST /v1/call side by side (${CONNECTIONS} connections, ${slices} slices of ${sliceMs} ms each)`)
      printAlternation(outcome, { rate: "calls/s", each: "a call" }, loadBefore)
    }
    for (const { pool } of started) {
      const [{ open }] = (await pool.query(`SELECT count(*)::int AS open FROM ledger_holds WHERE status = 'held'`)).rows
      console.log(`Open holds after the run: ${open}`)
    }
  } finally {
    for (const { db, pool, service } of started) {
      await pool.end()
      await service.stop()
      await db.drop()
    }
    provider.close()
  }
}

/** Starts one of the reference gateways and checks that it answers a call. */
const startReference = async (script: string, label: string, env: Record<string, string>, probe: RequestInit) => {
  const started = await startReadyChild(["--import", "tsx", script], env)
  const answer = await fetch(`${started.url}/v1/call`, probe)
  if (!answer.ok) {
    started.child.kill("SIGTERM")
    throw new Error(`the ${label} answered ${answer.status}: ${await answer.text()}`)
  }
  return started
}

export const run = async () => {
  const compareWith = process.env.BENCH_COMPARE_DIR
  if (compareWith !== undefined && compareWith.length > 0) {
    return runSideBySide([{ name: "this checkout", env: {} }, { name: compareWith, env: {}, checkout: compareWith }])
  }
  const variants = process.env.BENCH_VARIANTS
  if (variants !== undefined && variants.length > 0) {
    const changed = Object.entries(JSON.parse(variants) as Record<string, Record<string, string>>)
    return runSideBySide([
      { name: "as shipped", env: {} },
      ...changed.map(([name, env]) => ({ name, env }))
    ])
  }
  const loadBefore = os.loadavg()[0]!
  const db = await createBenchDatabase()
  const provider = await startBenchProvider(benchPersonAnswer)
  const service = await startService({
    DATABASE_URL: db.url,
    PROVIDERS_UPSTREAM: provider.url,
    METRICS_TOKEN,
    ...JSON.parse(process.env.BENCH_SERVICE_ENV ?? "{}")
  })
    .catch(async (error) => {
      provider.close()
      await db.drop()
      throw error
    })
  // The same service with every statement unnamed, to measure prepared statements (one lever).
  const unnamed = await startService({
    DATABASE_URL: db.url,
    PROVIDERS_UPSTREAM: provider.url,
    DATABASE_PREPARED_STATEMENTS: "false",
    METRICS_TOKEN,
    ...JSON.parse(process.env.BENCH_SERVICE_ENV ?? "{}")
  })
  const pool = new pg.Pool({ connectionString: db.url, max: 4 })
  let reference: { url: string; child: ChildProcess } | undefined
  let batchedReference: { url: string; child: ChildProcess } | undefined
  let minimalEffect: { url: string; child: ChildProcess } | undefined
  try {
    const { call } = await seedGatewayCalls(pool, db.url, ORGS, AGENTS_PER_ORG)
    // The reference charges what the service charges for this endpoint.
    const probe = await fetch(`${service.url}/v1/call`, call(0))
    const price = ((await probe.json()) as { charged: { credits: string } }).charged.credits
    const referenceEnv = {
      DATABASE_URL: db.url,
      PROVIDERS_UPSTREAM: provider.url,
      REFERENCE_ENDPOINT: "benchprov/person",
      REFERENCE_PRICE: price
    }
    reference = await startReference("bench/support/referenceGateway.ts", "reference gateway", referenceEnv, call(1))
    batchedReference = await startReference(
      "bench/support/referenceGateway.ts",
      "reference gateway, batched",
      { ...referenceEnv, REFERENCE_BATCHED: "true" },
      call(3)
    )
    minimalEffect = await startReference(
      "bench/support/minimalEffectGateway.ts",
      "minimal Effect gateway",
      referenceEnv,
      call(2)
    )
    const targets = [
      { label: "provider alone", url: `${provider.url}/benchprov/v1/person`, pid: undefined },
      {
        label: "reference gateway",
        url: `${reference.url}/v1/call`,
        pid: reference.child.pid!,
        request: call,
        statements: referenceStatements(reference.url)
      },
      {
        label: "reference gateway, batched",
        url: `${batchedReference.url}/v1/call`,
        pid: batchedReference.child.pid!,
        request: call,
        statements: referenceStatements(batchedReference.url)
      },
      {
        label: "minimal Effect gateway",
        url: `${minimalEffect.url}/v1/call`,
        pid: minimalEffect.child.pid!,
        request: call
      },
      {
        label: "service POST /v1/call",
        url: `${service.url}/v1/call`,
        pid: service.process.pid!,
        request: call,
        statements: serviceStatements(service.url),
        roundTrips: serviceRoundTrips(service.url)
      },
      {
        label: "service, statements unnamed",
        url: `${unnamed.url}/v1/call`,
        pid: unnamed.process.pid!,
        request: call,
        statements: serviceStatements(unnamed.url),
        closedLoopOnly: true
      }
    ]
    const measure = async (target: (typeof targets)[number], durationMs: number): Promise<Measured> => {
      const before = { cpu: target.pid === undefined ? 0 : processCpuMs(target.pid), pg: postgresTicks() }
      const load = await runLoad({ ...target, durationMs, connections: CONNECTIONS })
      const calls = Math.max(1, load.requests)
      return {
        load,
        cpuMsPerCall: target.pid === undefined ? 0 : (processCpuMs(target.pid) - before.cpu) / calls,
        postgresMsPerCall: postgresCpuMsBetween(before.pg, postgresTicks()) / calls
      }
    }
    /**
     * Statements, commits and rows written per call: one short run between two settled
     * readings (statements as the gateway counts them, commits and rows from PostgreSQL's
     * statistics), less what the services' background workers (polling their queues) did in
     * as long a window without calls, measured the same way just before.
     */
    const settle = () => new Promise((resolve) => setTimeout(resolve, STATS_SETTLE_MS))
    const settledWindow = async (statements: () => Promise<number>, during: () => Promise<number>) => {
      await settle()
      const before = { ...(await databaseWork(pool)), statements: await statements() }
      const started = performance.now()
      const calls = await during()
      await settle()
      const after = { ...(await databaseWork(pool)), statements: await statements() }
      const ms = performance.now() - started
      return {
        calls,
        statements: after.statements - before.statements,
        commits: after.commits - before.commits,
        rows: after.rows - before.rows,
        ms
      }
    }
    const databaseWorkPerCall = async (target: (typeof targets)[number], statements: () => Promise<number>) => {
      const idle = await settledWindow(
        statements,
        () => new Promise((resolve) => setTimeout(() => resolve(0), 2_000))
      )
      const busy = await settledWindow(
        statements,
        async () => (await runLoad({ ...target, durationMs: 2_000, connections: CONNECTIONS })).requests
      )
      const calls = Math.max(1, busy.calls)
      const scale = busy.ms / idle.ms
      return {
        statements: (busy.statements - idle.statements * scale) / calls,
        commits: (busy.commits - idle.commits * scale) / calls,
        rows: (busy.rows - idle.rows * scale) / calls,
        background: idle.commits / (idle.ms / 1000)
      }
    }

    for (const target of targets) await runLoad({ ...target, durationMs: 2_000, connections: 16 })
    const rounds = new Map<string, Array<Measured>>(targets.map((t) => [t.label, []]))
    for (let round = 0; round < ROUNDS; round++) {
      for (const target of targets) rounds.get(target.label)!.push(await measure(target, DURATION_MS))
    }

    console.log(`\nClosed loop, ${CONNECTIONS} connections, ${ROUNDS} rounds of ${DURATION_MS / 1000} s, medians`)
    const work = new Map<string, { statements: number; commits: number; rows: number; background: number }>()
    for (const target of targets) {
      if (target.statements !== undefined) work.set(target.label, await databaseWorkPerCall(target, target.statements))
    }
    const medians = new Map<string, { rps: number; cpu: number; pgCpu: number }>()
    for (const [label, measured] of rounds) {
      const m = {
        rps: median(measured.map((x) => x.load.rps)),
        cpu: median(measured.map((x) => x.cpuMsPerCall)),
        pgCpu: median(measured.map((x) => x.postgresMsPerCall))
      }
      medians.set(label, m)
      const rps = measured.map((x) => x.load.rps)
      const mid = measured.find((x) => x.load.rps === m.rps)!
      console.log(
        `${formatRow(label, mid.load)}   (range ${Math.min(...rps).toFixed(0)}–${Math.max(...rps).toFixed(0)}) ${
          JSON.stringify(mid.load.statuses)
        }`
      )
      const w = work.get(label)
      if (w === undefined && m.cpu > 0) {
        console.log(`    per call: CPU ${m.cpu.toFixed(2)} ms in the gateway, ${m.pgCpu.toFixed(2)} ms in PostgreSQL`)
      }
      if (w !== undefined) {
        console.log(
          `    per call: CPU ${m.cpu.toFixed(2)} ms in the gateway, ${m.pgCpu.toFixed(2)} ms in PostgreSQL; ` +
            `${w.statements.toFixed(1)} statements, ${w.commits.toFixed(1)} commits, ${
              w.rows.toFixed(1)
            } rows written ` +
            `(background of ${w.background.toFixed(1)} commits/s taken out)`
        )
      }
    }
    const ref = medians.get("reference gateway")!
    const batchedRef = medians.get("reference gateway, batched")!
    const svc = medians.get("service POST /v1/call")!
    const eff = medians.get("minimal Effect gateway")!
    const verdict = (met: boolean) => (met ? "met" : "NOT MET")
    console.log(
      `minimal Effect gateway / reference: throughput ${(eff.rps / ref.rps).toFixed(2)}, CPU per call ${
        ((eff.cpu + eff.pgCpu) / (ref.cpu + ref.pgCpu)).toFixed(2)
      } (the stack's own share); batched reference / reference: throughput ${(batchedRef.rps / ref.rps).toFixed(2)}`
    )
    console.log(
      `service / minimal Effect gateway: throughput ${(svc.rps / eff.rps).toFixed(2)} (target >= 0.85: ${
        verdict(svc.rps / eff.rps >= 0.85)
      }); service / reference: throughput ${(svc.rps / ref.rps).toFixed(2)} (target >= 0.55: ${
        verdict(svc.rps / ref.rps >= 0.55)
      }); service / batched reference: ${(svc.rps / batchedRef.rps).toFixed(2)}`
    )
    console.log(
      `PostgreSQL CPU per call, service / reference: ${(svc.pgCpu / ref.pgCpu).toFixed(2)} (target <= 1: ${
        verdict(svc.pgCpu / ref.pgCpu <= 1)
      }); service CPU per call / minimal Effect gateway's: ${(svc.cpu / eff.cpu).toFixed(2)}`
    )

    /** How much a counter grows in `ms` without calls (the background workers' share). */
    const windowCount = async (counter: () => Promise<number>, ms: number) => {
      const before = await counter()
      await new Promise((resolve) => setTimeout(resolve, ms))
      return (await counter()) - before
    }
    const added = new Map<string, number>()
    for (const rate of [20, 100]) {
      console.log(`\nAt ${rate} calls/s (${RATE_DURATION_MS / 1000} s each):`)
      const direct = await runLoad({
        ...targets[0]!,
        durationMs: RATE_DURATION_MS,
        connections: 64,
        ratePerSecond: rate
      })
      console.log(formatRow("  provider alone", direct))
      for (const target of targets.slice(1).filter((t) => !("closedLoopOnly" in t))) {
        // Round trips a call at this rate (the service's count; the reference's are its statements,
        // each awaited), less the background workers' own in an idle window as long just before.
        const roundTrips = "roundTrips" in target ? target.roundTrips : target.statements
        const idle = roundTrips === undefined ? 0 : await windowCount(roundTrips, RATE_DURATION_MS)
        // Twice: first as the closed loop left it (the service's key cache has expired since,
        // so at 20/s most calls are a key's first), then again right after, as a service in
        // steady state at this rate is (every key used within the cache's 30 s).
        for (const run of ["cold", "warm"] as const) {
          const before = roundTrips === undefined ? 0 : await roundTrips()
          const result = await runLoad({
            ...target,
            durationMs: RATE_DURATION_MS,
            connections: 64,
            ratePerSecond: rate
          })
          const perCall = roundTrips === undefined
            ? ""
            : `, ${
              (((await roundTrips()) - before - idle) / Math.max(1, result.requests)).toFixed(1)
            } round trips a call`
          console.log(
            `${formatRow(`  ${target.label}, ${run}`, result)}   added p50 ${
              (result.p50 - direct.p50).toFixed(2)
            } ms, p99 ${(result.p99 - direct.p99).toFixed(2)} ms${perCall}`
          )
          if (rate === 20) added.set(`${target.label}, ${run}`, result.p50 - direct.p50)
        }
      }
    }
    for (const run of ["cold", "warm"] as const) {
      const service = added.get(`service POST /v1/call, ${run}`)!
      const addedGap = service - added.get(`reference gateway, ${run}`)!
      console.log(
        `${run === "cold" ? "\n" : ""}added p50 at 20/s (${run}), service less reference gateway: ${
          addedGap.toFixed(2)
        } ms (target <= 1 ms: ${verdict(addedGap <= 1)}); less minimal Effect gateway: ${
          (service - added.get(`minimal Effect gateway, ${run}`)!).toFixed(2)
        } ms`
      )
    }
    const [{ open }] = (await pool.query(`SELECT count(*)::int AS open FROM ledger_holds WHERE status = 'held'`)).rows
    console.log(`\nOpen holds after the run: ${open}`)
    console.log(`load average (1 min) before: ${loadBefore.toFixed(2)}${loadBefore > 2 ? "  NOT COMPARABLE" : ""}`)
  } finally {
    reference?.child.kill("SIGTERM")
    batchedReference?.child.kill("SIGTERM")
    minimalEffect?.child.kill("SIGTERM")
    await pool.end()
    await service.stop()
    await unnamed.stop()
    provider.close()
    await db.drop()
  }
}
