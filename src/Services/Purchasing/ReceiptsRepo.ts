import { SqlClient, SqlSchema } from "@effect/sql"
import { Effect, Option, Schema } from "effect"
import { AgentId, OrgId, ReceiptId } from "../../Domain/Ids.js"
import { Receipt, ReceiptTotals } from "../../Domain/Receipt.js"

/**
 * Receipts: one per purchase, read and written through the `Receipt` model; with its totals
 * summed over its items and its tool (`ReceiptTotals`) for reading. A receipt is written in
 * the transaction that holds its items' credits.
 */
const Cursor = Schema.Struct({ created_at: Schema.DateFromSelf, id: ReceiptId })
const OrgReceipt = Schema.Struct({ orgId: OrgId, id: ReceiptId })

export class ReceiptsRepo extends Effect.Service<ReceiptsRepo>()("Purchasing/ReceiptsRepo", {
  effect: Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient

    const insertRow = SqlSchema.void({
      Request: Receipt.insert,
      execute: (row) => sql`INSERT INTO receipts ${sql.insert(row)}`
    })
    /** A purchase's receipt, written in the transaction of its items' holds. */
    const insertReceipt = (row: typeof Receipt.insert.Type) => insertRow(row).pipe(Effect.orDie)

    const totalsSelect = sql`
      SELECT r.*, json_build_object('id', t.id, 'slug', t.slug, 'name', t.name, 'provider', t.provider) AS tool,
        COALESCE(s.charged, 0)::text AS charged_credits, COALESCE(s.refunded, 0)::text AS refunded_credits,
        json_build_object(
          'passed', COALESCE(s.passed, 0)::int, 'partial', COALESCE(s.partial, 0)::int,
          'failed', COALESCE(s.failed, 0)::int, 'expired', COALESCE(s.expired, 0)::int,
          'pending', COALESCE(s.pending, 0)::int) AS counts,
        COALESCE(s.fallback_used, false) AS fallback_used
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

    const findWithTotals = SqlSchema.findOne({
      Request: OrgReceipt,
      Result: ReceiptTotals,
      execute: ({ id, orgId }) => sql`${totalsSelect} WHERE r.id = ${id} AND r.org_id = ${orgId}`
    })
    const receiptWithTotals = (orgId: OrgId, id: ReceiptId) => findWithTotals({ orgId, id }).pipe(Effect.orDie)

    /** Newest first; `after` is the receipt the previous page ended with. */
    const listPage = SqlSchema.findAll({
      Request: Schema.Struct({ orgId: OrgId, limit: Schema.Number, after: Schema.NullOr(Cursor) }),
      Result: ReceiptTotals,
      execute: ({ after, limit, orgId }) =>
        after !== null
          ? sql`${totalsSelect}
            WHERE r.org_id = ${orgId} AND (r.created_at, r.id) < (${after.created_at}, ${after.id})
            ORDER BY r.created_at DESC, r.id DESC LIMIT ${limit}`
          : sql`${totalsSelect} WHERE r.org_id = ${orgId} ORDER BY r.created_at DESC, r.id DESC LIMIT ${limit}`
    })
    const listReceipts = (orgId: OrgId, limit: number, after: Option.Option<typeof Cursor.Type>) =>
      listPage({ orgId, limit, after: Option.getOrNull(after) }).pipe(Effect.orDie)

    const findCursor = SqlSchema.findOne({
      Request: OrgReceipt,
      Result: Cursor,
      execute: ({ id, orgId }) => sql`SELECT created_at, id FROM receipts WHERE id = ${id} AND org_id = ${orgId}`
    })
    const receiptCursor = (orgId: OrgId, id: ReceiptId) => findCursor({ orgId, id }).pipe(Effect.orDie)

    const findBuyer = SqlSchema.findOne({
      Request: OrgReceipt,
      Result: Schema.Struct({ ...Cursor.fields, agent_id: AgentId }),
      execute: ({ id, orgId }) =>
        sql`SELECT created_at, id, agent_id FROM receipts WHERE id = ${id} AND org_id = ${orgId}`
    })
    /** The receipt with the agent that bought it. */
    const receiptBuyer = (orgId: OrgId, id: ReceiptId) => findBuyer({ orgId, id }).pipe(Effect.orDie)

    /**
     * Marks a running receipt done. The statement alone may join others of the same
     * settlement (made only when `condition` holds, e.g. the settlement's own).
     */
    const completeReceipt = (receiptId: ReceiptId, now: Date) =>
      sql`UPDATE receipts SET status = 'done', completed_at = ${now} WHERE id = ${receiptId} AND status = 'running'`
        .pipe(Effect.asVoid, Effect.orDie)

    const findStale = SqlSchema.findAll({
      Request: Schema.Struct({ before: Schema.DateFromSelf, now: Schema.DateFromSelf, limit: Schema.Number }),
      Result: Receipt,
      execute: ({ before, limit, now }) =>
        sql`
          SELECT * FROM receipts r
          WHERE r.status = 'running' AND r.job_id IS NULL AND r.created_at < ${before}
            AND NOT EXISTS (
              SELECT 1 FROM receipt_items i
              WHERE i.receipt_id = r.id AND i.status = 'running' AND i.claimed_until >= ${now})
          ORDER BY r.created_at LIMIT ${limit} FOR UPDATE SKIP LOCKED`
    })
    /** Direct purchases started before `before` none of whose items is still claimed at `now`. */
    const staleDirectReceipts = (before: Date, now: Date, limit: number) =>
      findStale({ before, now, limit }).pipe(Effect.orDie)

    const findReceipt = SqlSchema.findOne({
      Request: ReceiptId,
      Result: Receipt,
      execute: (receiptId) => sql`SELECT * FROM receipts WHERE id = ${receiptId}`
    })
    const receipt = (receiptId: ReceiptId) => findReceipt(receiptId).pipe(Effect.orDie)

    const findLocked = SqlSchema.findOne({
      Request: ReceiptId,
      Result: Receipt,
      execute: (receiptId) => sql`SELECT * FROM receipts WHERE id = ${receiptId} FOR UPDATE`
    })
    const lockReceipt = (receiptId: ReceiptId) => findLocked(receiptId).pipe(Effect.orDie)

    return {
      insertReceipt,
      receipt,
      receiptWithTotals,
      listReceipts,
      receiptCursor,
      receiptBuyer,
      completeReceipt,
      staleDirectReceipts,
      lockReceipt
    } as const
  })
}) {}
