import { execFile } from "node:child_process"
import { promisify } from "node:util"
import type { TestDatabase } from "../support/database.js"
import { call } from "../support/world.js"

const execFileAsync = promisify(execFile)

/** The operator side's helpers: an administrator's calls and the audit log read back. */
export const adminCall = (
  world: { readonly server: { readonly url: string } },
  admin: { readonly token: string },
  method: string,
  path: string,
  body?: unknown
) => call(world, method, path, { token: admin.token, ...(body === undefined ? {} : { body }) })

/** The audit lines about one target, oldest first. */
export const auditOf = (db: TestDatabase, targetId: string) =>
  db.query(
    `SELECT action, admin_id, reason, before, after FROM admin_audit WHERE target_id = $1 ORDER BY created_at, id`,
    [targetId]
  )

/** A benchmark report for a tool, dated `daysAgo` days before today (database time). */
export const writeBenchmark = (db: TestDatabase, toolId: string, accuracy: number, daysAgo = 0) =>
  db.query(
    `INSERT INTO tool_benchmarks (tool_id, date, sample_size, accuracy, coverage, latency_p50_ms, latency_p95_ms)
     VALUES ($1, current_date - $2::int, 200, $3, 0.9, 300, 900)
     ON CONFLICT (tool_id, date) DO UPDATE SET accuracy = excluded.accuracy`,
    [toolId, daysAgo, accuracy]
  )

/**
 * The database as `pg_dump --data-only` writes it, one row a line, each with the table it
 * belongs to: what someone searching a backup for a person would read.
 */
export const databaseDump = async (db: TestDatabase) => {
  const { stdout } = await execFileAsync("pg_dump", ["--data-only", "--no-owner", "--dbname", db.url], {
    maxBuffer: 256 * 1024 * 1024
  })
  const rows: Array<{ table: string; line: string }> = []
  let table = ""
  for (const line of stdout.split("\n")) {
    const copy = /^COPY ([^ ]+) /.exec(line)
    if (copy) table = copy[1]!
    else if (line === "\\.") table = ""
    else if (table !== "") rows.push({ table, line })
  }
  return rows
}

/** The tables of a dump whose rows hold `value` (case-insensitive). */
export const tablesHolding = (dump: ReadonlyArray<{ table: string; line: string }>, value: string) => [
  ...new Set(dump.filter((row) => row.line.toLowerCase().includes(value.toLowerCase())).map((row) => row.table))
]
