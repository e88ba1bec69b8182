import { SqlClient, SqlSchema } from "@effect/sql"
import { Effect, Schema, Struct } from "effect"
import { type Benchmark, ToolEntry } from "../../Domain/Tool.js"

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
  check_verifies: Schema.String
})
export type ToolRow = typeof ToolRow.Type

const BenchmarkRow = Schema.Struct({
  tool_id: Schema.String,
  date: Schema.String,
  sample_size: Schema.Number,
  accuracy: Schema.NumberFromString,
  coverage: Schema.NumberFromString,
  latency_p50_ms: Schema.Number,
  latency_p95_ms: Schema.Number
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

    const all = SqlSchema.findAll({
      Request: Schema.Void,
      Result: ToolRow,
      execute: () => sql`SELECT * FROM tools ORDER BY task_type, slug`
    })(undefined).pipe(Effect.orDie)

    const benchmarks = SqlSchema.findAll({
      Request: Schema.Void,
      Result: BenchmarkRow,
      execute: () =>
        sql`
          SELECT tool_id, to_char(date, 'YYYY-MM-DD') AS date, sample_size, accuracy, coverage, latency_p50_ms,
                 latency_p95_ms
          FROM tool_benchmarks ORDER BY date DESC, tool_id`
    })(undefined).pipe(
      Effect.map((rows) =>
        rows.map(({ tool_id, ...benchmark }) => ({ tool_id, benchmark: benchmark satisfies Benchmark }))
      ),
      Effect.orDie
    )

    const findByRef = SqlSchema.findOne({
      Request: Schema.String,
      Result: ToolRow,
      execute: (ref) => sql`SELECT * FROM tools WHERE id::text = ${ref.toLowerCase()} OR slug = ${ref} LIMIT 1`
    })
    /** A tool by id or slug (one row; the ranking is read only when a fallback needs it). */
    const byRef = (ref: string) => findByRef(ref).pipe(Effect.orDie)

    return { upsert, all, benchmarks, byRef } as const
  })
}) {}
