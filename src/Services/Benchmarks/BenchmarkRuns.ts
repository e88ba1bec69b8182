import { SqlClient } from "@effect/sql"
import { Clock, Config, Effect, Option } from "effect"
import { randomUUID } from "node:crypto"
import { type BenchmarkRun, type BenchmarkRunView } from "../../Domain/BenchmarkRun.js"
import { BenchmarkRunId } from "../../Domain/Ids.js"
import { currentDate } from "../../Domain/Timestamps.js"
import { priceAt } from "../../Domain/ToolGates.js"
import { Conflict, InvalidInput, NotFound } from "../../Errors/ApiErrors.js"
import { type AuditActor, AuditLog } from "../Operations/AuditLog.js"
import { checkFor, runCheck } from "../Purchasing/Checks.js"
import { PurchasingConfig } from "../Purchasing/PurchasingConfig.js"
import { ToolRunner } from "../Purchasing/ToolRunner.js"
import { type ToolRow, ToolsRepo } from "../Tools/ToolsRepo.js"
import { BenchmarkRunsRepo, type ChunkTotals } from "./BenchmarkRunsRepo.js"
import { isRightAnswer, quantile } from "./Grading.js"
import { type Sample, SampleSets } from "./SampleSets.js"

/**
 * Measured benchmarks. A run takes a tool and a labelled sample set of its task type and
 * puts every sample through the same tool runner and published check as a purchase (no org
 * is charged), then records sample size, coverage (share of samples whose answer passed the
 * check), accuracy (share of those that match the known answer), latency p50/p95 (each
 * sample's run, retry included), what the passing answers would have cost at the tool's
 * price, and the check version. `/v1/reports`, `/v1/scores` and recommend read the newest
 * report, so they follow a run as soon as it finishes.
 *
 * Runs are durable jobs: queued in the database, claimed by a worker with a lease, progress
 * and running totals written after every chunk of samples, taken over by another worker if
 * the lease lapses (a crash), one run in flight per tool. Started by an administrator, or
 * by the schedule: every tool on sale or paused whose latest report is older than
 * BENCHMARK_EVERY_DAYS (default 30; 0 turns the schedule off) gets a run.
 *
 * The workers and the schedule run in the server (BenchmarkWorkers.ts).
 *
 * BENCHMARK_RUNNER picks the runner: `mock` (the default: the mock tools, as test agents
 * buy, so the loop works on the embedded default and in tests) or `live` (the providers).
 */
const CHUNK = 5
const LEASE_MS = 60_000

/** A run as the wire shows it: its progress, and the results measured once it is done. */
export const runView = (run: BenchmarkRun): BenchmarkRunView => {
  const finished = run.status === "done"
  return {
    id: run.id,
    tool_id: run.tool_id,
    sample_set: run.sample_set,
    started_by: run.started_by,
    status: run.status,
    progress: { done: run.done, total: run.total },
    check_version: run.check_version,
    results: finished
      ? {
        sample_size: run.total,
        coverage: run.total === 0 ? 0 : round3(run.answered / run.total),
        accuracy: run.answered === 0 ? 0 : round3(run.correct / run.answered),
        latency_p50_ms: quantile(run.latencies_ms, 0.5),
        latency_p95_ms: quantile(run.latencies_ms, 0.95),
        cost_credits: run.cost_credits.toString()
      }
      : null,
    failure: run.failure,
    created_at: run.created_at,
    started_at: run.started_at,
    finished_at: run.finished_at
  }
}

const round3 = (value: number) => Math.round(value * 1000) / 1000

export class BenchmarkRuns extends Effect.Service<BenchmarkRuns>()("Benchmarks/BenchmarkRuns", {
  dependencies: [
    BenchmarkRunsRepo.Default,
    ToolsRepo.Default,
    ToolRunner.Default,
    SampleSets.Default,
    AuditLog.Default,
    PurchasingConfig.Default
  ],
  effect: Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const repo = yield* BenchmarkRunsRepo
    const tools = yield* ToolsRepo
    const runner = yield* ToolRunner
    const sampleSets = yield* SampleSets
    const audit = yield* AuditLog
    const config = yield* PurchasingConfig
    const mode = yield* Config.literal("mock", "live")("BENCHMARK_RUNNER").pipe(Config.withDefault("mock" as const))
    const everyDays = yield* Config.integer("BENCHMARK_EVERY_DAYS").pipe(Config.withDefault(30))

    const toolOr404 = (ref: string) =>
      Effect.flatMap(tools.byRef(ref), (found) =>
        Option.match(found, {
          onNone: () => new NotFound({ message: `No tool with id or slug ${JSON.stringify(ref)}` }),
          onSome: Effect.succeed
        }))

    /** Queues a run (an administrator's, audited, or the schedule's when `actor` is null). */
    const start = (actor: AuditActor | null, ref: string, sampleSetId?: string) =>
      Effect.gen(function*() {
        const tool = yield* toolOr404(ref)
        if (checkFor(tool.check_id, tool.check_version) === undefined) {
          return yield* new InvalidInput({
            message: `${tool.slug}'s check ${tool.check_id}@${tool.check_version} has no implementation to run`
          })
        }
        const set = sampleSets.find(tool.task_type, sampleSetId)
        if (set === undefined || set.task_type !== tool.task_type) {
          return yield* new InvalidInput({
            message: sampleSetId === undefined
              ? `No sample set for ${tool.task_type}`
              : `No sample set ${sampleSetId} for ${tool.task_type} (GET /admin/sample-sets lists them)`
          })
        }
        const id = BenchmarkRunId.make(randomUUID())
        const at = yield* currentDate
        return yield* sql.withTransaction(Effect.gen(function*() {
          const queued = yield* repo.insert({
            id,
            tool_id: tool.id,
            sample_set: set.id,
            started_by: actor === null ? "schedule" : actor.email,
            total: set.samples.length,
            status: "queued",
            check_version: tool.check_version,
            created_at: at
          })
          if (!queued) return yield* new Conflict({ message: `${tool.slug} has a benchmark run in progress` })
          if (actor !== null) {
            yield* audit.record(actor, {
              action: "tool.benchmark",
              target_type: "tool",
              target_id: tool.id,
              after: { run_id: id, sample_set: set.id }
            })
          }
          return runView(Option.getOrThrow(yield* repo.byId(id)))
        }))
      }).pipe(Effect.catchTag("SqlError", Effect.die))

    const get = (id: string) =>
      Effect.flatMap(repo.byId(id), (found) =>
        Option.match(found, {
          onNone: () => new NotFound({ message: `No benchmark run ${id}` }),
          onSome: (run) => Effect.succeed(runView(run))
        }))

    const forTool = (ref: string) =>
      Effect.flatMap(toolOr404(ref), (tool) => Effect.map(repo.forTool(tool.id), (runs) => runs.map(runView)))

    /** One sample through the runner and the check: what it adds to the totals. */
    const runSample = (tool: ToolRow, price: bigint, sample: Sample) =>
      Effect.gen(function*() {
        const started = yield* Clock.currentTimeMillis
        const answer = yield* runner.run(tool, sample.input, mode === "mock" ? "test" : "live", null)
        const latency = Number((yield* Clock.currentTimeMillis) - started)
        const covered = answer._tag === "Answer" &&
          runCheck(tool.check_id, tool.check_version, sample.input, answer.result).outcome !== "failed"
        const right = covered && answer._tag === "Answer" &&
          isRightAnswer(tool.task_type, answer.result, sample.expected)
        return { covered, right, latency, cost: covered ? price : 0n }
      })

    /** Runs a claimed run from where it stands; answers when it is finished or was taken over. */
    const carryOut = (run: BenchmarkRun, owner: string) =>
      Effect.gen(function*() {
        const tool = Option.getOrThrow(yield* tools.byRef(run.tool_id))
        const set = sampleSets.find(tool.task_type, run.sample_set)
        if (set === undefined) {
          return yield* repo.fail(run.id, `Sample set ${run.sample_set} is gone`, yield* currentDate)
        }
        const price = priceAt(tool, yield* currentDate) ?? 0n
        for (let from = run.done; from < set.samples.length; from += CHUNK) {
          const outcomes = yield* Effect.forEach(
            set.samples.slice(from, from + CHUNK),
            (sample) => runSample(tool, price, sample),
            { concurrency: CHUNK }
          )
          const totals: ChunkTotals = {
            done: outcomes.length,
            answered: outcomes.filter((o) => o.covered).length,
            correct: outcomes.filter((o) => o.right).length,
            latencies: outcomes.map((o) => o.latency),
            cost: outcomes.reduce((sum, o) => sum + o.cost, 0n)
          }
          const lease = new Date((yield* currentDate).getTime() + LEASE_MS)
          if (!(yield* repo.recordChunk(run.id, owner, totals, lease))) return
        }
        yield* finish(run.id, owner)
      })

    /** Writes the report and closes the run in one transaction. */
    const finish = (runId: BenchmarkRunId, owner: string) =>
      sql.withTransaction(Effect.gen(function*() {
        const at = yield* currentDate
        const run = Option.getOrThrow(yield* repo.byId(runId))
        if (!(yield* repo.finish(runId, owner, at))) return
        const results = runView({ ...run, status: "done" }).results!
        yield* tools.insertMeasured({
          tool_id: run.tool_id,
          run_id: run.id,
          measured_at: at,
          sample_size: results.sample_size,
          accuracy: results.accuracy,
          coverage: results.coverage,
          latency_p50_ms: results.latency_p50_ms,
          latency_p95_ms: results.latency_p95_ms,
          cost_credits: run.cost_credits,
          check_version: run.check_version
        })
      })).pipe(Effect.orDie)

    /** Claims and carries out the next run; false when none waits. */
    const runNext = (owner: string) =>
      Effect.gen(function*() {
        const at = yield* currentDate
        const claimed = yield* repo.claimNext(owner, at, new Date(at.getTime() + LEASE_MS))
        if (Option.isNone(claimed)) return false
        yield* carryOut(claimed.value, owner).pipe(
          Effect.catchAllDefect((defect) =>
            Effect.flatMap(
              currentDate,
              (failedAt) => repo.fail(claimed.value.id, `The run failed: ${String(defect)}`, failedAt)
            )
          )
        )
        return true
      })

    /** Queues a run for every tool whose latest report is older than the schedule allows. */
    const scheduleDue = Effect.gen(function*() {
      if (everyDays <= 0) return 0
      const before = new Date((yield* currentDate).getTime() - everyDays * 86_400_000).toISOString().slice(0, 10)
      const due = yield* repo.dueTools(before)
      for (const toolId of due) yield* Effect.ignore(start(null, toolId))
      return due.length
    })

    return {
      start,
      get,
      forTool,
      runNext,
      scheduleDue,
      sampleSets: sampleSets.list,
      pollMs: config.jobPollIntervalMs
    } as const
  })
}) {}
