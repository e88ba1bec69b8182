import { SqlClient } from "@effect/sql"
import { Effect, Option } from "effect"
import type { TaskTypeId } from "../../Domain/TaskType.js"
import type { Benchmark, ToolEntry, ToolStatus } from "../../Domain/Tool.js"

/** SQL for tools and their benchmark reports. */
export interface ToolRow {
  readonly id: string
  readonly slug: string
  readonly name: string
  readonly provider: string
  readonly provider_name: string
  readonly task_type: TaskTypeId
  readonly description: string
  readonly price_per_success_credits: string | null
  readonly status: ToolStatus
  readonly resale_rights: boolean
  readonly gateway_endpoint: string
  readonly input: { readonly required: ReadonlyArray<string>; readonly optional: ReadonlyArray<string> }
  readonly check_id: string
  readonly check_version: string
  readonly check_verifies: string
}

interface BenchmarkRow {
  readonly tool_id: string
  readonly date: string
  readonly sample_size: number
  readonly accuracy: string
  readonly coverage: string
  readonly latency_p50_ms: number
  readonly latency_p95_ms: number
}

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

    const all = sql<ToolRow>`SELECT * FROM tools ORDER BY task_type, slug`.pipe(Effect.orDie)

    const benchmarks = sql<BenchmarkRow>`
      SELECT tool_id, to_char(date, 'YYYY-MM-DD') AS date, sample_size, accuracy, coverage, latency_p50_ms, latency_p95_ms
      FROM tool_benchmarks ORDER BY date DESC, tool_id`.pipe(
      Effect.map((rows) =>
        rows.map((row) => ({
          tool_id: row.tool_id,
          benchmark: {
            date: row.date,
            sample_size: row.sample_size,
            accuracy: Number(row.accuracy),
            coverage: Number(row.coverage),
            latency_p50_ms: row.latency_p50_ms,
            latency_p95_ms: row.latency_p95_ms
          } satisfies Benchmark
        }))
      ),
      Effect.orDie
    )

    /** A tool by id or slug (one row; the ranking is read only when a fallback needs it). */
    const byRef = (ref: string) =>
      sql<ToolRow>`SELECT * FROM tools WHERE id::text = ${ref.toLowerCase()} OR slug = ${ref} LIMIT 1`.pipe(
        Effect.map((rows) => Option.fromNullable(rows[0])),
        Effect.orDie
      )

    return { upsert, all, benchmarks, byRef } as const
  })
}) {}
