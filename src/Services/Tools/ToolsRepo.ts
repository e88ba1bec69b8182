import { SqlClient, SqlSchema } from "@effect/sql"
import { Effect, Schema, Struct } from "effect"
import { type Benchmark, Tool, type ToolEntry, type ToolStatus } from "../../Domain/Tool.js"

/** SQL for tools and their benchmark reports; rows decode to the `Tool` model, writes encode from its variants. */

/** A tool's row as the repository reads it: the model. */
export type ToolRow = Tool

/** The columns an administrator sets on a tool (descriptive fields and resale rights). */
const adminColumns = [
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
] as const
export const ToolFields = Schema.Struct(Struct.pick(Tool.fields, ...adminColumns))
export type ToolFields = typeof ToolFields.Type

const encodeInserts = Schema.encode(Schema.Array(Tool.insert))
const encodeChanges = Schema.encode(Schema.partial(Schema.Struct(Struct.pick(Tool.update.fields, ...adminColumns))))

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
          sql.insert(
            yield* encodeInserts(tools.map(({ benchmarks: _, check, price_per_success_credits, ...entry }) => ({
              ...entry,
              price_per_success_credits: price_per_success_credits === null ? null : BigInt(price_per_success_credits),
              check_id: check.id,
              check_version: check.version,
              check_verifies: check.verifies,
              paused_reason: null,
              next_price_credits: null,
              next_price_from: null,
              adapter_ok: null,
              adapter_problem: null
            })))
          )
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
      Result: Tool,
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
      Result: Tool,
      execute: (ref) => sql`${select} WHERE t.id::text = ${ref.toLowerCase()} OR t.slug = ${ref} LIMIT 1`
    })
    /** A tool by id or slug (one row; the ranking is read only when a fallback needs it). */
    const byRef = (ref: string) => findByRef(ref).pipe(Effect.orDie)

    /** Serialises administrators' changes to one tool (inside their transaction). */
    const lock = (toolId: string) =>
      sql`SELECT 1 FROM tools WHERE id = ${toolId} FOR UPDATE`.pipe(Effect.asVoid, Effect.orDie)

    const insert = (id: string, fields: ToolFields) =>
      encodeInserts([{
        id,
        ...fields,
        price_per_success_credits: null,
        status: "information_only",
        paused_reason: null,
        next_price_credits: null,
        next_price_from: null,
        adapter_ok: null,
        adapter_problem: null
      }]).pipe(
        Effect.flatMap((rows) => sql`INSERT INTO tools ${sql.insert(rows)}`),
        Effect.asVoid,
        Effect.orDie
      )

    const update = (id: string, fields: Partial<ToolFields>) =>
      Object.keys(fields).length === 0
        ? Effect.void
        : encodeChanges(fields).pipe(
          Effect.flatMap((changes) => sql`UPDATE tools SET ${sql.update(changes)} WHERE id = ${id}`),
          Effect.asVoid,
          Effect.orDie
        )

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
