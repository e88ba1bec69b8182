import { SqlClient } from "@effect/sql"
import { Effect, Option } from "effect"
import type { TaskTypeId } from "../../Domain/TaskType.js"

/**
 * Receipts: one per purchase, with its totals summed over its items.
 * Money columns come back as strings of digits (bigint), timestamps as Dates, jsonb parsed.
 */
export interface ReceiptRow {
  readonly id: string
  readonly org_id: string
  readonly agent_id: string
  readonly mode: "test" | "live"
  readonly tool_id: string
  readonly task_type: TaskTypeId
  readonly price_credits: string
  readonly item_count: number
  readonly held_credits: string
  readonly fallback: boolean
  readonly status: "running" | "done"
  readonly job_id: string | null
  readonly approval_id: string | null
  readonly idempotency_key: string | null
  readonly created_at: Date
  readonly completed_at: Date | null
}

/** A receipt with its totals, summed over its items. */
export interface ReceiptTotalsRow extends ReceiptRow {
  readonly tool_slug: string
  readonly tool_name: string
  readonly tool_provider: string
  readonly charged_credits: string
  readonly refunded_credits: string
  readonly passed: number
  readonly partial: number
  readonly failed: number
  readonly expired: number
  readonly pending: number
  readonly fallback_used: boolean
}

const first = <A>(rows: ReadonlyArray<A>) => Option.fromNullable(rows[0])

export class ReceiptsRepo extends Effect.Service<ReceiptsRepo>()("Purchasing/ReceiptsRepo", {
  effect: Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient

    const insertReceipt = (row: Omit<ReceiptRow, "completed_at">) =>
      sql`INSERT INTO receipts ${sql.insert({ ...row, completed_at: null })}`.pipe(Effect.asVoid, Effect.orDie)

    const totalsSelect = sql`
      SELECT r.*, t.slug AS tool_slug, t.name AS tool_name, t.provider AS tool_provider,
        COALESCE(s.charged, 0)::text AS charged_credits, COALESCE(s.refunded, 0)::text AS refunded_credits,
        COALESCE(s.passed, 0)::int AS passed, COALESCE(s.partial, 0)::int AS partial,
        COALESCE(s.failed, 0)::int AS failed, COALESCE(s.expired, 0)::int AS expired,
        COALESCE(s.pending, 0)::int AS pending, COALESCE(s.fallback_used, false) AS fallback_used
      FROM receipts r
      JOIN tools t ON t.id = r.tool_id
      LEFT JOIN LATERAL (
        SELECT sum(i.cost_credits) AS charged, sum(i.refunded_credits) AS refunded,
          count(*) FILTER (WHERE i.status = 'passed') AS passed,
          count(*) FILTER (WHERE i.status = 'partial') AS partial,
          count(*) FILTER (WHERE i.status = 'failed') AS failed,
          count(*) FILTER (WHERE i.status = 'expired') AS expired,
          count(*) FILTER (WHERE i.status IN ('pending', 'running')) AS pending,
          bool_or(i.fallback_from IS NOT NULL) AS fallback_used
        FROM receipt_items i WHERE i.receipt_id = r.id
      ) s ON true`

    const receiptWithTotals = (orgId: string, id: string) =>
      sql<ReceiptTotalsRow>`${totalsSelect} WHERE r.id = ${id} AND r.org_id = ${orgId}`.pipe(
        Effect.map(first),
        Effect.orDie
      )

    /** Newest first; `after` is the receipt the previous page ended with. */
    const listReceipts = (orgId: string, limit: number, after: Option.Option<{ created_at: Date; id: string }>) =>
      (Option.isSome(after)
        ? sql<ReceiptTotalsRow>`${totalsSelect}
            WHERE r.org_id = ${orgId} AND (r.created_at, r.id) < (${after.value.created_at}, ${after.value.id})
            ORDER BY r.created_at DESC, r.id DESC LIMIT ${limit}`
        : sql<ReceiptTotalsRow>`${totalsSelect}
            WHERE r.org_id = ${orgId} ORDER BY r.created_at DESC, r.id DESC LIMIT ${limit}`).pipe(Effect.orDie)

    const receiptCursor = (orgId: string, id: string) =>
      sql<{ created_at: Date; id: string }>`SELECT created_at, id FROM receipts WHERE id = ${id} AND org_id = ${orgId}`
        .pipe(Effect.map(first), Effect.orDie)

    const completeReceipt = (receiptId: string, now: Date) =>
      sql`UPDATE receipts SET status = 'done', completed_at = ${now} WHERE id = ${receiptId} AND status = 'running'`
        .pipe(Effect.asVoid, Effect.orDie)

    /** Direct purchases still running after their items' claims must have lapsed. */
    /** Direct purchases started before `before` none of whose items is still claimed at `now`. */
    const staleDirectReceipts = (before: Date, now: Date, limit: number) =>
      sql<ReceiptRow>`
        SELECT * FROM receipts r
        WHERE r.status = 'running' AND r.job_id IS NULL AND r.created_at < ${before}
          AND NOT EXISTS (
            SELECT 1 FROM receipt_items i WHERE i.receipt_id = r.id AND i.status = 'running' AND i.claimed_until >= ${now})
        ORDER BY r.created_at LIMIT ${limit} FOR UPDATE SKIP LOCKED`.pipe(Effect.orDie)

    const lockReceipt = (receiptId: string) =>
      sql<ReceiptRow>`SELECT * FROM receipts WHERE id = ${receiptId} FOR UPDATE`.pipe(Effect.map(first), Effect.orDie)

    return {
      insertReceipt,
      receiptWithTotals,
      listReceipts,
      receiptCursor,
      completeReceipt,
      staleDirectReceipts,
      lockReceipt
    } as const
  })
}) {}
