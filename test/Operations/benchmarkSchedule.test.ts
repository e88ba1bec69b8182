import { Layer, ManagedRuntime } from "effect"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { DatabaseLive } from "../../src/Layers/Database.js"
import { AppConfig } from "../../src/Services/AppConfig.js"
import { BenchmarkRuns } from "../../src/Services/Benchmarks/BenchmarkRuns.js"
import { BenchmarkWorkersLive } from "../../src/Services/Benchmarks/BenchmarkWorkers.js"
import { createTestDatabase, type TestDatabase } from "../support/database.js"
import { eventually } from "../support/eventually.js"
import { testConfig } from "../support/testLayers.js"

/**
 * The benchmark schedule as a rule of the benchmark workers, run as the service runs them
 * (its database and configuration layers) in this process on the suite's database, without
 * HTTP: with reports due after a day, every tool on sale or paused is measured. The reports
 * are the template's as shipped (none dated today), so every such tool is due. The /admin
 * benchmark routes are `wire.test.ts`'s.
 */
let db: TestDatabase
let workers: ManagedRuntime.ManagedRuntime<never, unknown>

beforeAll(async () => {
  db = await createTestDatabase("op_bench_schedule")
  workers = ManagedRuntime.make(
    BenchmarkWorkersLive.pipe(
      Layer.provide(BenchmarkRuns.Default),
      Layer.provide(Layer.mergeAll(DatabaseLive, AppConfig.Default)),
      Layer.provide(testConfig({ DATABASE_URL: db.url, DATABASE_POOL_SIZE: "4", BENCHMARK_EVERY_DAYS: "1" }))
    )
  )
  await workers.runtime()
})

afterAll(async () => {
  await workers?.dispose()
  await db?.drop()
})

describe("the benchmark schedule", () => {
  it("measures every tool on sale or paused whose report is older than the schedule allows", async () => {
    const counts = async () =>
      (await db.query(
        `SELECT count(*) FILTER (WHERE status = 'done')::int AS done, count(*)::int AS runs,
                count(DISTINCT tool_id)::int AS tools
         FROM benchmark_runs WHERE started_by = 'schedule'`
      ))[0]
    const [{ eligible }] = await db.query(
      `SELECT count(*)::int AS eligible FROM tools WHERE status IN ('live', 'paused')`
    )
    expect(eligible).toBeGreaterThan(0)
    const done = await eventually(async () => {
      const now = await counts()
      return now.done === eligible ? now : undefined
    }, { what: "every scheduled run", timeoutMs: 60_000 })
    expect(done).toEqual({ done: eligible, runs: eligible, tools: eligible })
    const [{ measured }] = await db.query(
      `SELECT count(DISTINCT tool_id)::int AS measured FROM tool_benchmarks WHERE run_id IS NOT NULL`
    )
    expect(measured).toBe(eligible)
  }, 90_000)
})
