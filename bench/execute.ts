import * as os from "node:os"
import pg from "pg"
import { alternate, median, printAlternation, type Side } from "./support/alternate.js"
import { postgresCpuMsBetween, postgresTicks, processCpuMs } from "./support/cpu.js"
import { formatRow, runLoad } from "./support/load.js"
import {
  createBenchDatabase,
  type RunningService,
  seedPurchases,
  startBenchProvider,
  startService
} from "./support/service.js"

/**
 * `POST /v1/execute` throughput with test agents (mock tools answering at once, so what is
 * measured is the service: credentials, idempotency key, receipt, a ledger hold and
 * settlement per item, the published check, the answer):
 * - single inputs, closed loop, each request under its own idempotency key, spread over
 *   several agents so the per-key rate limit (600 a minute) is never reached, with the CPU
 *   a purchase takes in the service's process and in PostgreSQL (from /proc);
 * - one 1,000-input job: time to accept it (every item held) and to finish it, in items/s.
 * A bare node:http server answering JSON runs the same closed loop first: the machine's
 * yardstick, so figures from machines of different speed (or one machine on a slow day)
 * compare as ratios.
 *
 * With BENCH_COMPARE_DIR (another checkout of the project, e.g. `git worktree add
 * ../before <commit>` with node_modules linked), the single-input loop instead runs this
 * checkout's service and that one's side by side in alternating slices (support/alternate.ts)
 * and prints the ratio between them, then 1,000-input jobs on each in turn (BENCH_JOBS, 4).
 */
const DURATION_MS = Number(process.env.BENCH_DURATION_MS ?? 10_000)
const CONNECTIONS = 16
const AGENTS = 32

/** One 1,000-input job: submitted, accepted (every item held), then polled until done. */
const runJob = async (serviceUrl: string, pool: pg.Pool, agentKey: string, label: string) => {
  const inputs = Array.from({ length: 1000 }, (_, i) => ({ url: `https://news.example.com/${label}/${i}` }))
  const submitted = performance.now()
  const accepted = await fetch(`${serviceUrl}/v1/execute`, {
    method: "POST",
    headers: { authorization: `Bearer ${agentKey}`, "content-type": "application/json" },
    body: JSON.stringify({ tool: "jina-reader", inputs })
  })
  const acceptedMs = performance.now() - submitted
  const { job_id: jobId } = await accepted.json() as { job_id: string }
  let done = false
  while (!done) {
    await new Promise((resolve) => setTimeout(resolve, 50))
    const [row] = (await pool.query(`SELECT status FROM purchase_jobs WHERE id = $1`, [jobId])).rows
    done = row?.status === "done"
  }
  const doneMs = performance.now() - submitted
  const [{ passed }] = (await pool.query(
    `SELECT count(*)::int AS passed FROM receipt_items i JOIN purchase_jobs j ON j.receipt_id = i.receipt_id
     WHERE j.id = $1 AND i.status = 'passed'`,
    [jobId]
  )).rows
  return { status: accepted.status, acceptedMs, doneMs, passed: passed as number }
}

/** This checkout's service against another's, single-input purchases in alternating slices. */
const runPaired = async (otherCheckout: string) => {
  const slices = Number(process.env.BENCH_SLICES ?? 10)
  const sliceMs = Number(process.env.BENCH_SLICE_MS ?? 3_000)
  const jobRounds = Number(process.env.BENCH_JOBS ?? 4)
  const started: Array<
    { db: Awaited<ReturnType<typeof createBenchDatabase>>; service: RunningService; pool: pg.Pool; jobKey: string }
  > = []
  try {
    const sides: Array<Side> = []
    for (const [name, checkout] of [["this checkout", undefined], [otherCheckout, otherCheckout]] as const) {
      const db = await createBenchDatabase()
      const service = await startService({ DATABASE_URL: db.url, JOB_POLL_INTERVAL_MS: "100" }, checkout)
      const pool = new pg.Pool({ connectionString: db.url, max: 4 })
      const { buyers, purchase: request } = await seedPurchases(pool, AGENTS)
      started.push({ db, service, pool, jobKey: buyers[0]!.key })
      await runLoad({
        url: `${service.url}/v1/execute`,
        durationMs: 2000,
        connections: CONNECTIONS,
        request: (i) => request(i + 10_000_000)
      })
      sides.push({ name, url: `${service.url}/v1/execute`, pids: [service.process.pid!], request })
    }
    const loadBefore = os.loadavg()[0]!
    const outcome = await alternate([sides[0]!, sides[1]!], { slices, sliceMs, connections: CONNECTIONS })
    console.log(
      `\nExecute, single input, side by side (${CONNECTIONS} connections, ${slices} slices of ${sliceMs} ms each)`
    )
    printAlternation(outcome, { rate: "purchases/s", each: "a purchase" }, loadBefore)
    // 1,000-input jobs, one side after the other, the order swapping every round.
    const rates: [Array<number>, Array<number>] = [[], []]
    for (let round = 0; round < jobRounds; round++) {
      for (const index of round % 2 === 0 ? [0, 1] : [1, 0]) {
        const side = started[index]!
        const job = await runJob(side.service.url, side.pool, side.jobKey, `round-${round}`)
        rates[index]!.push(1000 / (job.doneMs / 1000))
      }
    }
    const pairRatios = rates[0].map((rate, round) => rate / rates[1][round]!)
    console.log(`\nExecute, 1,000-input jobs end to end, side by side (${jobRounds} each)`)
    sides.forEach((side, index) =>
      console.log(`${side.name}: ${rates[index]!.map((rate) => rate.toFixed(0)).join(", ")} items/s`)
    )
    console.log(
      `this checkout against the other, round by round: ${median(pairRatios).toFixed(2)}x (${
        Math.min(...pairRatios).toFixed(2)
      }–${Math.max(...pairRatios).toFixed(2)}); load average (1 min) ${os.loadavg()[0]!.toFixed(2)} after`
    )
  } finally {
    for (const { db, pool, service } of started) {
      await pool.end()
      await service.stop()
      await db.drop()
    }
  }
}

export const run = async () => {
  const compareWith = process.env.BENCH_COMPARE_DIR
  if (compareWith !== undefined && compareWith.length > 0) return runPaired(compareWith)
  const db = await createBenchDatabase()
  const service = await startService({ DATABASE_URL: db.url, JOB_POLL_INTERVAL_MS: "100" })
  const pool = new pg.Pool({ connectionString: db.url, max: 4 })
  try {
    const { buyers: agents, purchase: request } = await seedPurchases(pool, AGENTS)
    // Warm up.
    await runLoad({
      url: `${service.url}/v1/execute`,
      durationMs: 2000,
      connections: CONNECTIONS,
      request: (i) => request(i + 10_000_000)
    })
    const bare = await startBenchProvider({ ok: true })
    const yardstick = await runLoad({ url: `${bare.url}/`, durationMs: 5_000, connections: CONNECTIONS })
    bare.close()
    const serviceCpuBefore = processCpuMs(service.process.pid!)
    const postgresBefore = postgresTicks()
    const single = await runLoad({
      url: `${service.url}/v1/execute`,
      durationMs: DURATION_MS,
      connections: CONNECTIONS,
      request
    })
    const purchases = Math.max(1, single.requests)
    const serviceCpu = (processCpuMs(service.process.pid!) - serviceCpuBefore) / purchases
    const postgresCpu = postgresCpuMsBetween(postgresBefore, postgresTicks()) / purchases
    console.log(`\nExecute, single input (${CONNECTIONS} connections, ${DURATION_MS / 1000} s)`)
    console.log(formatRow("POST /v1/execute, 1 input", single))
    console.log(`statuses ${JSON.stringify(single.statuses)}`)
    console.log(
      `per purchase: CPU ${serviceCpu.toFixed(2)} ms in the service, ${postgresCpu.toFixed(2)} ms in PostgreSQL`
    )
    console.log(
      `machine yardstick: bare node:http ${yardstick.rps.toFixed(0)} req/s; purchases per 1,000 of its requests: ${
        (1000 * single.rps / yardstick.rps).toFixed(1)
      }; load average (1 min) ${os.loadavg()[0]!.toFixed(2)}`
    )

    const job = await runJob(service.url, pool, agents[0]!.key, "job")
    const seconds = job.doneMs / 1000
    console.log(`\nExecute, one 1,000-input job (${job.status})`)
    console.log(`accepted (1,000 items held) in ${job.acceptedMs.toFixed(0)} ms`)
    console.log(
      `finished in ${seconds.toFixed(2)} s: ${
        (1000 / seconds).toFixed(0)
      } items/s end to end (${job.passed} passed), ` +
        `${(1000 / ((job.doneMs - job.acceptedMs) / 1000)).toFixed(0)} items/s after acceptance`
    )
    console.log(
      `job items end to end per 1,000 yardstick requests: ${(1000 * (1000 / seconds) / yardstick.rps).toFixed(1)}`
    )
  } finally {
    await pool.end()
    await service.stop()
    await db.drop()
  }
}
