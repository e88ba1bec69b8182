import { SqlClient } from "@effect/sql"
import { Effect, Stream } from "effect"
import type { OrgActor } from "../../Domain/Current.js"
import { Refusals } from "./Refusals.js"
import { type UsageQuery, usageRange } from "./Usage.js"
import type { UsageRange } from "./UsageRepo.js"

/**
 * `GET /v1/orgs/{orgId}/exports/{dataset}`: the org's calls, receipt items, ledger entries or
 * daily usage over a range of UTC days, as CSV or JSON Lines. Rows are read from a database
 * cursor 128 at a time and written as they come, so an export of any size holds one batch
 * in memory, never the whole range.
 *
 * The credit columns say what moved: a test row (a test agent's call or item, priced like a
 * live one but charging nothing) has 0 in `charged_credits`, `cost_credits` and
 * `refunded_credits`, so a spreadsheet's sum of a column is what the org spent, with no
 * filter by `mode`. What a test call was priced at stays in `price_credits`; the usage
 * dataset gives test pricing per agent and day in `test_priced_credits`.
 */
export const EXPORT_DATASETS = ["calls", "receipts", "ledger", "usage"] as const
export type ExportDataset = (typeof EXPORT_DATASETS)[number]
export type ExportFormat = "csv" | "jsonl"

type Row = Record<string, unknown>

/** The columns of each dataset, in order (the CSV header, the JSON Lines keys). */
export const exportColumns: Record<ExportDataset, ReadonlyArray<string>> = {
  calls: [
    "id",
    "created_at",
    "agent_id",
    "agent_name",
    "endpoint",
    "provider",
    "mode",
    "status",
    "price_credits",
    "charged_credits",
    "refunded_credits",
    "latency_ms",
    "provider_status"
  ],
  receipts: [
    "receipt_id",
    "created_at",
    "agent_id",
    "agent_name",
    "mode",
    "tool",
    "task_type",
    "receipt_status",
    "item_index",
    "item_status",
    "cost_credits",
    "refunded_credits",
    "check",
    "reason",
    "input",
    "result"
  ],
  ledger: ["id", "seq", "created_at", "kind", "balance_change_credits", "credits", "agent_id", "hold_id", "note"],
  usage: [
    "day",
    "agent_id",
    "agent_name",
    "spend_credits",
    "test_priced_credits",
    "calls",
    "items",
    "refusals"
  ]
}

const digits = /^-?\d+$/

/** One CSV cell: quoted when needed; text that a spreadsheet would run as a formula is defused. */
const csvCell = (value: unknown): string => {
  if (value === null || value === undefined) return ""
  const text = value instanceof Date
    ? value.toISOString()
    : typeof value === "object"
    ? JSON.stringify(value)
    : String(value)
  const safe = /^[=+\-@\t\r]/.test(text) && !digits.test(text) ? `'${text}` : text
  return /[",\r\n]/.test(safe) ? `"${safe.replace(/"/g, "\"\"")}"` : safe
}

const jsonValue = (value: unknown) => value instanceof Date ? value.toISOString() : value ?? null

/** The lines of an export: the CSV header first; every line ends with a newline. */
export const exportLines = (
  columns: ReadonlyArray<string>,
  format: ExportFormat,
  rows: Stream.Stream<Row, never>
): Stream.Stream<string, never> =>
  format === "csv"
    ? Stream.concat(
      Stream.make(`${columns.join(",")}\r\n`),
      Stream.map(rows, (row) => `${columns.map((c) => csvCell(row[c])).join(",")}\r\n`)
    )
    : Stream.map(rows, (row) => `${JSON.stringify(Object.fromEntries(columns.map((c) => [c, jsonValue(row[c])])))}\n`)

export class Exports extends Effect.Service<Exports>()("Usage/Exports", {
  dependencies: [Refusals.Default],
  effect: Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const refusals = yield* Refusals

    const queries: Record<ExportDataset, (range: UsageRange) => Stream.Stream<Row, unknown>> = {
      calls: (r) =>
        sql<Row>`
          SELECT c.id, c.created_at, c.agent_id, a.name AS agent_name, c.endpoint_id AS endpoint,
            c.provider_id AS provider, c.mode, c.status, c.price_credits::text AS price_credits,
            CASE WHEN c.mode = 'test' THEN '0' ELSE c.charged_credits::text END AS charged_credits,
            CASE WHEN c.mode = 'test' THEN '0' ELSE c.refunded_credits::text END AS refunded_credits,
            c.latency_ms, c.provider_status
          FROM gateway_calls c LEFT JOIN agents a ON a.id = c.agent_id
          WHERE c.org_id = ${r.orgId} AND c.created_at >= ${r.from} AND c.created_at < ${r.until}
          ORDER BY c.created_at, c.id`.stream,
      receipts: (r) =>
        sql<Row>`
          SELECT rc.id AS receipt_id, rc.created_at, rc.agent_id, a.name AS agent_name, rc.mode, t.slug AS tool,
            rc.task_type, rc.status AS receipt_status, i.idx AS item_index, i.status AS item_status,
            CASE WHEN rc.mode = 'test' THEN '0' ELSE i.cost_credits::text END AS cost_credits,
            CASE WHEN rc.mode = 'test' THEN '0' ELSE i.refunded_credits::text END AS refunded_credits,
            CASE WHEN i.check_id IS NULL THEN NULL ELSE i.check_id || '@' || i.check_version END AS "check",
            i.reason, i.input, i.result
          FROM receipts rc
            JOIN receipt_items i ON i.receipt_id = rc.id
            LEFT JOIN agents a ON a.id = rc.agent_id
            LEFT JOIN tools t ON t.id = rc.tool_id
          WHERE rc.org_id = ${r.orgId} AND rc.created_at >= ${r.from} AND rc.created_at < ${r.until}
          ORDER BY rc.created_at, rc.id, i.idx`.stream,
      ledger: (r) =>
        sql<Row>`
          SELECT id, seq::text AS seq, created_at, kind, amount::text AS balance_change_credits,
            credits::text AS credits, agent_id, hold_id, note
          FROM ledger_entries
          WHERE org_id = ${r.orgId} AND created_at >= ${r.from} AND created_at < ${r.until}
          ORDER BY seq`.stream,
      usage: (r) =>
        sql<Row>`
          WITH spent AS (
            SELECT to_char(created_at AT TIME ZONE 'UTC', 'YYYY-MM-DD') AS day, agent_id,
              sum(CASE WHEN test_mode THEN 0 ELSE captured - refunded END) AS spend,
              sum(CASE WHEN test_mode THEN captured - refunded ELSE 0 END) AS test_priced,
              count(*) FILTER (WHERE purpose = 'gateway_call') AS calls,
              count(*) FILTER (WHERE purpose = 'purchase_item') AS items
            FROM ledger_holds
            WHERE org_id = ${r.orgId} AND captured > 0 AND created_at >= ${r.from} AND created_at < ${r.until}
            GROUP BY 1, 2
          ),
          refused AS (
            SELECT to_char(day, 'YYYY-MM-DD') AS day, agent_id, sum(count) AS refusals
            FROM agent_refusals
            WHERE org_id = ${r.orgId} AND day >= ${r.from}::date AND day < ${r.until}::date
            GROUP BY 1, 2
          )
          SELECT coalesce(s.day, f.day) AS day, coalesce(s.agent_id, f.agent_id) AS agent_id, a.name AS agent_name,
            coalesce(s.spend, 0)::text AS spend_credits, coalesce(s.test_priced, 0)::text AS test_priced_credits,
            coalesce(s.calls, 0)::int AS calls, coalesce(s.items, 0)::int AS items,
            coalesce(f.refusals, 0)::int AS refusals
          FROM spent s
            FULL JOIN refused f ON f.day = s.day AND f.agent_id = s.agent_id
            LEFT JOIN agents a ON a.id = coalesce(s.agent_id, f.agent_id)
          ORDER BY 1, 3, 2`.stream
    }

    /** The export's lines, ready to stream; a bad range fails before anything is sent. */
    const lines = (actor: OrgActor, dataset: ExportDataset, format: ExportFormat, query: UsageQuery) =>
      Effect.map(
        // Refusals counted in memory are written first, as the usage answer does.
        Effect.zipLeft(usageRange(actor.org_id, query), dataset === "usage" ? refusals.flush : Effect.void),
        (range) => ({
          range,
          lines: exportLines(exportColumns[dataset], format, queries[dataset](range).pipe(Stream.orDie))
        })
      )

    return { lines } as const
  })
}) {}
