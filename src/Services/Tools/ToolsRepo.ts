import { SqlClient, SqlSchema } from "@effect/sql"
import { Effect, Schema, Struct } from "effect"
import { type Benchmark, ToolEntry, type ToolStatus } from "../../Domain/Tool.js"

/** SQL for tools and their benchmark reports; rows decoded (the price as bigint credits). */
export const ToolRow = Schema.Struct({
  ...Struct.pick(
    ToolEntry.fields,
    "slug",
    "name",
    "provider",
    "provider_name",
    "task_type",
    "description",
    "status",
    "resale_rights",
    "gateway_endpoint",
    "input"
  ),
  id: Schema.String,
  price_per_success_credits: Schema.NullOr(Schema.BigInt),
  check_id: Schema.String,
  check_version: Schema.String,
  check_verifies: Schema.String,
  paused_reason: Schema.NullOr(Schema.String),
  next_price_credits: Schema.NullOr(Schema.BigInt),
  next_price_from: Schema.NullOr(Schema.DateFromSelf),
  adapter_ok: Schema.NullOr(Schema.Boolean),
  adapter_problem: Schema.NullOr(Schema.String),
  /** The latest benchmark report's day and accuracy (null before the first). */
  latest_benchmark_date: Schema.NullOr(Schema.String),
  latest_accuracy: Schema.NullOr(Schema.NumberFromString)
})
export type ToolRow = typeof ToolRow.Type

/** The columns an administrator sets on a tool (descriptive fields and resale rights). */
export const ToolFields = Schema.Struct(
  Struct.pick(
    ToolRow.fields,
    "slug",
    "name",
    "provider",
    "provider_name",
    "task_type",
    "description",
    "resale_rights",
    "gateway_endpoint",
    "input",
    "check_id",
    "check_version",
    "check_verifies"
  )
)
export type ToolFields = typeof ToolFields.Type

export interface MeasuredBenchmark {
  readonly tool_id: string
  readonly run_id: string
  readonly measured_at: Date
  readonly sample_size: number
  readonly accuracy: number
  readonly coverage: number
  readonly latency_p50_ms: number
  readonly latency_p95_ms: number
  readonly cost_credits: bigint
  readonly check_version: string
}

const BenchmarkRow = Schema.Struct({
  tool_id: Schema.String,
  date: Schema.String,
  sample_size: Schema.Number,
  accuracy: Schema.NumberFromString,
  coverage: Schema.NumberFromString,
  latency_p50_ms: Schema.Number,
  latency_p95_ms: Schema.Number,
  run_id: Schema.NullOr(Schema.String),
  check_version: Schema.NullOr(Schema.String),
  cost_credits: Schema.NullOr(Schema.BigInt)
})

export class ToolsRepo extends Effect.Service<ToolsRepo>()("Tools/ToolsRepo", {
  effect: Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient

    /** New tools are inserted; descriptive fields refresh; price and status in the database are kept. */
    const upsert = (tools: ReadonlyArray<ToolEntry>) =>
      sql.withTransaction(Effect.gen(function*() {
        yield* sql`
          INSERT INTO tools ${
          sql.insert(tools.map((t) => ({
            id: t.id,
            slug: t.slug,
            name: t.name,
            provider: t.provider,
            provider_name: t.provider_name,
            task_type: t.task_type,
            description: t.description,
            price_per_success_credits: t.price_per_success_credits,
            status: t.status,
            resale_rights: t.resale_rights,
            gateway_endpoint: t.gateway_endpoint,
            input: JSON.stringify(t.input),
            check_id: t.check.id,
            check_version: t.check.version,
            check_verifies: t.check.verifies
          })))
        }
          ON CONFLICT (id) DO UPDATE SET slug = excluded.slug, name = excluded.name, provider = excluded.provider,
            provider_name = excluded.provider_name, task_type = excluded.task_type,
            description = excluded.description, resale_rights = excluded.resale_rights,
            gateway_endpoint = excluded.gateway_endpoint, input = excluded.input, check_id = excluded.check_id,
            check_version = excluded.check_version, check_verifies = excluded.check_verifies`
        yield* sql`
          INSERT INTO tool_benchmarks ${
          sql.insert(tools.flatMap((t) =>
            t.benchmarks.map((b) => ({
              tool_id: t.id,
              date: b.date,
              sample_size: b.sample_size,
              accuracy: b.accuracy,
              coverage: b.coverage,
              latency_p50_ms: b.latency_p50_ms,
              latency_p95_ms: b.latency_p95_ms
            }))
          ))
        }
          ON CONFLICT (tool_id, date) DO NOTHING`
      })).pipe(Effect.orDie)

    // Each tool with its latest benchmark's day and accuracy, for the publishing gates.
    const select = sql`
      SELECT t.*, to_char(b.date, 'YYYY-MM-DD') AS latest_benchmark_date, b.accuracy AS latest_accuracy
      FROM tools t
      LEFT JOIN LATERAL (
        SELECT date, accuracy FROM tool_benchmarks WHERE tool_id = t.id ORDER BY date DESC LIMIT 1
      ) b ON true`

    const all = SqlSchema.findAll({
      Request: Schema.Void,
      Result: ToolRow,
      execute: () => sql`${select} ORDER BY t.task_type, t.slug`
    })(undefined).pipe(Effect.orDie)

    const benchmarks = SqlSchema.findAll({
      Request: Schema.Void,
      Result: BenchmarkRow,
      execute: () =>
        sql`
          SELECT tool_id, to_char(date, 'YYYY-MM-DD') AS date, sample_size, accuracy, coverage, latency_p50_ms,
                 latency_p95_ms, run_id, check_version, cost_credits
          FROM tool_benchmarks ORDER BY date DESC, tool_id`
    })(undefined).pipe(
      Effect.map((rows) =>
        rows.map(({ check_version, cost_credits, run_id, tool_id, ...benchmark }) => ({
          tool_id,
          benchmark: benchmark satisfies Benchmark,
          measurement: { run_id, check_version, cost_credits }
        }))
      ),
      Effect.orDie
    )

    const findByRef = SqlSchema.findOne({
      Request: Schema.String,
      Result: ToolRow,
      execute: (ref) => sql`${select} WHERE t.id::text = ${ref.toLowerCase()} OR t.slug = ${ref} LIMIT 1`
    })
    /** A tool by id or slug (one row; the ranking is read only when a fallback needs it). */
    const byRef = (ref: string) => findByRef(ref).pipe(Effect.orDie)

    /** Serialises administrators' changes to one tool (inside their transaction). */
    const lock = (toolId: string) =>
      sql`SELECT 1 FROM tools WHERE id = ${toolId} FOR UPDATE`.pipe(Effect.asVoid, Effect.orDie)

    const insert = (id: string, fields: ToolFields) =>
      sql`
        INSERT INTO tools ${
        sql.insert({
          id,
          ...fields,
          input: JSON.stringify(fields.input),
          price_per_success_credits: null,
          status: "information_only"
        })
      }`.pipe(Effect.asVoid, Effect.orDie)

    const update = (id: string, fields: Partial<ToolFields>) => {
      const changes = { ...fields, ...(fields.input === undefined ? {} : { input: JSON.stringify(fields.input) }) }
      return Object.keys(changes).length === 0
        ? Effect.void
        : sql`UPDATE tools SET ${sql.update(changes)} WHERE id = ${id}`.pipe(Effect.asVoid, Effect.orDie)
    }

    const setStatus = (id: string, status: ToolStatus, pausedReason: string | null) =>
      sql`UPDATE tools SET status = ${status}, paused_reason = ${pausedReason} WHERE id = ${id}`.pipe(
        Effect.asVoid,
        Effect.orDie
      )

    /** The price now and the one scheduled (null when none waits). */
    const setPrices = (
      id: string,
      current: bigint | null,
      next: { readonly credits: bigint; readonly from: Date } | null
    ) =>
      sql`
        UPDATE tools SET price_per_success_credits = ${current}, next_price_credits = ${next?.credits ?? null},
          next_price_from = ${next?.from ?? null}
        WHERE id = ${id}`.pipe(Effect.asVoid, Effect.orDie)

    const setAdapterHealth = (id: string, ok: boolean, problem: string | null, at: Date) =>
      sql`
        UPDATE tools SET adapter_ok = ${ok}, adapter_problem = ${problem}, adapter_checked_at = ${at}
        WHERE id = ${id}`.pipe(Effect.asVoid, Effect.orDie)

    const findUsers = SqlSchema.findAll({
      Request: Schema.Struct({ toolId: Schema.String, since: Schema.DateFromSelf }),
      Result: Schema.Struct({ org_id: Schema.String }),
      execute: ({ since, toolId }) =>
        sql`SELECT DISTINCT org_id FROM receipts WHERE tool_id = ${toolId} AND created_at >= ${since}`
    })
    /** The orgs that bought from the tool since `since` (test or live). */
    const usersSince = (toolId: string, since: Date) =>
      findUsers({ toolId, since }).pipe(Effect.map((rows) => rows.map((row) => row.org_id)), Effect.orDie)

    /** A measured report; a second run on the same day replaces the day's report. */
    const insertMeasured = (report: MeasuredBenchmark) =>
      sql`
        INSERT INTO tool_benchmarks (tool_id, date, sample_size, accuracy, coverage, latency_p50_ms, latency_p95_ms,
                                     measured_at, run_id, check_version, cost_credits)
        VALUES (${report.tool_id}, ${report.measured_at.toISOString().slice(0, 10)}::date, ${report.sample_size},
                ${report.accuracy.toFixed(3)}, ${report.coverage.toFixed(3)}, ${report.latency_p50_ms},
                ${report.latency_p95_ms}, ${report.measured_at}, ${report.run_id}, ${report.check_version},
                ${report.cost_credits})
        ON CONFLICT (tool_id, date) DO UPDATE SET sample_size = excluded.sample_size, accuracy = excluded.accuracy,
          coverage = excluded.coverage, latency_p50_ms = excluded.latency_p50_ms,
          latency_p95_ms = excluded.latency_p95_ms, measured_at = excluded.measured_at, run_id = excluded.run_id,
          check_version = excluded.check_version, cost_credits = excluded.cost_credits`.pipe(
        Effect.asVoid,
        Effect.orDie
      )

    return {
      upsert,
      all,
      benchmarks,
      byRef,
      lock,
      insert,
      update,
      setStatus,
      setPrices,
      setAdapterHealth,
      usersSince,
      insertMeasured
    } as const
  })
}) {}
