import * as os from "node:os"
import { formatRow, type LoadResult, runLoad } from "./support/load.js"
import { createBenchDatabase, startService } from "./support/service.js"

/**
 * One process against two (WORKER_PROCESSES=2) on the same database and Redis, side by side
 * in one run, three rounds, medians: `GET /v1/task-types` in a closed loop, the public path
 * whose cost is all in the service's own process. Each request comes from its own forwarded
 * address, so the rate limit (in Redis for both) is counted but never reached.
 */
const DURATION_MS = Number(process.env.BENCH_DURATION_MS ?? 5_000)
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 3)
const CONNECTIONS = 64
const REDIS_URL = process.env.BENCH_REDIS_URL ?? "redis://127.0.0.1:6379"

const median = (values: ReadonlyArray<number>) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]!

export const run = async () => {
  const loadBefore = os.loadavg()[0]!
  const db = await createBenchDatabase()
  const common = { DATABASE_URL: db.url, REDIS_URL, TRUSTED_PROXIES: "127.0.0.1", ACCESS_LOG: "false" }
  const one = await startService({ ...common, WORKER_PROCESSES: "1" })
  const two = await startService({ ...common, WORKER_PROCESSES: "2" })
  let address = 0
  const forwarded = () => ({
    headers: { "x-forwarded-for": `10.${(++address >> 16) & 255}.${(address >> 8) & 255}.${address & 255}` }
  })
  const targets = [
    { label: "one process", url: `${one.url}/v1/task-types` },
    { label: "two processes (WORKER_PROCESSES=2)", url: `${two.url}/v1/task-types` }
  ]
  const results = new Map<string, Array<LoadResult>>(targets.map((t) => [t.label, []]))
  try {
    for (const target of targets) {
      await runLoad({ ...target, request: forwarded, durationMs: 1500, connections: CONNECTIONS })
    }
    for (let round = 1; round <= ROUNDS; round++) {
      for (const target of targets) {
        results.get(target.label)!.push(
          await runLoad({ ...target, request: forwarded, durationMs: DURATION_MS, connections: CONNECTIONS })
        )
      }
    }
    console.log(`\nGET /v1/task-types, one process against two (${CONNECTIONS} connections, ${ROUNDS} rounds, medians)`)
    const medians = new Map<string, number>()
    for (const [label, rounds] of results) {
      const rps = rounds.map((r) => r.rps)
      medians.set(label, median(rps))
      const mid = rounds.find((r) => r.rps === median(rps))!
      console.log(`${formatRow(label, mid)}   (range ${Math.min(...rps).toFixed(0)}–${Math.max(...rps).toFixed(0)})`)
    }
    const [single, double] = targets.map((t) => medians.get(t.label)!)
    console.log(
      `two / one: ${(double! / single!).toFixed(2)} on ${os.cpus().length} cores (the load generator uses one)`
    )
    console.log(`load average (1 min) before: ${loadBefore.toFixed(2)}${loadBefore > 2 ? "  NOT COMPARABLE" : ""}`)
  } finally {
    await one.stop()
    await two.stop()
    await db.drop()
  }
}
