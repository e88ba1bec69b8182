import { SqlClient, SqlSchema } from "@effect/sql"
import { Effect, Schema } from "effect"
import { BenchmarkRun } from "../../Domain/BenchmarkRun.js"
import { BenchmarkRunId } from "../../Domain/Ids.js"

/** Benchmark runs: durable jobs with their progress and running totals, read and written as `BenchmarkRun`. */
export interface ChunkTotals {
  readonly done: number
  readonly answered: number
  readonly correct: number
  readonly latencies: ReadonlyArray<number>
  readonly cost: bigint
}

const columns =
  `id, tool_id, sample_set, started_by, status, total, done, answered, correct, latencies_ms, cost_credits,
  check_version, failure, created_at, started_at, finished_at`

export class BenchmarkRunsRepo extends Effect.Service<BenchmarkRunsRepo>()("Benchmarks/BenchmarkRunsRepo", {
  effect: Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const select = sql.unsafe(`SELECT ${columns} FROM benchmark_runs`)

    const insertRun = SqlSchema.findOne({
      Request: BenchmarkRun.insert,
      Result: Schema.Struct({ id: BenchmarkRunId }),
      execute: (run) => sql`INSERT INTO benchmark_runs ${sql.insert(run)} ON CONFLICT DO NOTHING RETURNING id`
    })
    /** Queues a run; false when the tool already has one queued or running. */
    const insert = (run: typeof BenchmarkRun.insert.Type) =>
      insertRun(run).pipe(Effect.map((row) => row._tag === "Some"), Effect.orDie)

    const claim = SqlSchema.findOne({
      Request: Schema.Struct({ owner: Schema.String, now: Schema.DateFromSelf, leaseUntil: Schema.DateFromSelf }),
      Result: BenchmarkRun,
      execute: ({ leaseUntil, now, owner }) =>
        sql`
          UPDATE benchmark_runs SET status = 'running', started_at = COALESCE(started_at, ${now}),
            claimed_by = ${owner}, lease_until = ${leaseUntil}
          WHERE id = (
            SELECT id FROM benchmark_runs
            WHERE status = 'queued' OR (status = 'running' AND lease_until < ${now})
            ORDER BY created_at FOR UPDATE SKIP LOCKED LIMIT 1
          )
          RETURNING ${sql.unsafe(columns)}`
    })
    /** Takes the oldest queued run, or a running one whose worker stopped renewing its lease. */
    const claimNext = (owner: string, now: Date, leaseUntil: Date) =>
      claim({ owner, now, leaseUntil }).pipe(Effect.orDie)

    const addChunk = SqlSchema.findOne({
      Request: Schema.Struct({
        id: BenchmarkRunId,
        owner: Schema.String,
        done: Schema.Number,
        answered: Schema.Number,
        correct: Schema.Number,
        latencies: Schema.Array(Schema.Number),
        cost: Schema.BigInt,
        leaseUntil: Schema.DateFromSelf
      }),
      Result: Schema.Struct({ id: Schema.String }),
      execute: (c) =>
        sql`
          UPDATE benchmark_runs SET done = done + ${c.done}, answered = answered + ${c.answered},
            correct = correct + ${c.correct}, latencies_ms = latencies_ms || ${c.latencies}::int[],
            cost_credits = cost_credits + ${c.cost}, lease_until = ${c.leaseUntil}
          WHERE id = ${c.id} AND claimed_by = ${c.owner} AND status = 'running'
          RETURNING id`
    })
    /** Adds a chunk's totals and renews the lease; false when another worker took the run over. */
    const recordChunk = (id: BenchmarkRunId, owner: string, totals: ChunkTotals, leaseUntil: Date) =>
      addChunk({
        id,
        owner,
        done: totals.done,
        answered: totals.answered,
        correct: totals.correct,
        latencies: totals.latencies,
        cost: totals.cost,
        leaseUntil
      }).pipe(Effect.map((row) => row._tag === "Some"), Effect.orDie)

    const finishRun = SqlSchema.findOne({
      Request: Schema.Struct({ id: BenchmarkRunId, owner: Schema.String, at: Schema.DateFromSelf }),
      Result: Schema.Struct({ id: Schema.String }),
      execute: ({ at, id, owner }) =>
        sql`
          UPDATE benchmark_runs SET status = 'done', finished_at = ${at}, lease_until = NULL
          WHERE id = ${id} AND claimed_by = ${owner} AND status = 'running' RETURNING id`
    })
    const finish = (id: BenchmarkRunId, owner: string, at: Date) =>
      finishRun({ id, owner, at }).pipe(Effect.map((row) => row._tag === "Some"), Effect.orDie)

    const fail = (id: BenchmarkRunId, failure: string, at: Date) =>
      sql`
        UPDATE benchmark_runs SET status = 'failed', failure = ${failure}, finished_at = ${at}, lease_until = NULL
        WHERE id = ${id} AND status IN ('queued', 'running')`.pipe(Effect.asVoid, Effect.orDie)

    const findRun = SqlSchema.findOne({
      Request: Schema.String,
      Result: BenchmarkRun,
      execute: (id) => sql`${select} WHERE id::text = ${id}`
    })
    const byId = (id: string) => findRun(id).pipe(Effect.orDie)

    const findForTool = SqlSchema.findAll({
      Request: Schema.String,
      Result: BenchmarkRun,
      execute: (toolId) => sql`${select} WHERE tool_id = ${toolId} ORDER BY created_at DESC LIMIT 50`
    })
    const forTool = (toolId: string) => findForTool(toolId).pipe(Effect.orDie)

    const findDue = SqlSchema.findAll({
      Request: Schema.Struct({ before: Schema.String }),
      Result: Schema.Struct({ id: Schema.String }),
      execute: ({ before }) =>
        sql`
          SELECT t.id FROM tools t
          WHERE t.status IN ('live', 'paused')
            AND NOT EXISTS (SELECT 1 FROM tool_benchmarks b WHERE b.tool_id = t.id AND b.date >= ${before}::date)
            AND NOT EXISTS (SELECT 1 FROM benchmark_runs r WHERE r.tool_id = t.id AND r.status IN ('queued', 'running'))
          ORDER BY t.slug`
    })
    /** Tools on sale or paused whose latest report is older than `before` (YYYY-MM-DD) and none is running. */
    const dueTools = (before: string) =>
      findDue({ before }).pipe(Effect.map((rows) => rows.map((row) => row.id)), Effect.orDie)

    return { insert, claimNext, recordChunk, finish, fail, byId, forTool, dueTools } as const
  })
}) {}
