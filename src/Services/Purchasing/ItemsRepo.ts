import { SqlClient, SqlSchema } from "@effect/sql"
import { Effect, Option, Schema } from "effect"
import { HoldId, ReceiptId, ReceiptItemId } from "../../Domain/Ids.js"
import { PurchaseItem } from "../../Domain/PurchaseItem.js"

/**
 * Receipt items: one per input of a purchase, claimed by the process running it; rows decode
 * to the `PurchaseItem` model. New items are written in the purchase's one statement
 * (HoldFence.ts) and outcomes in batches, so those writes stay hand-made SQL.
 */
export type NewItem = typeof PurchaseItem.insert.Type

const ItemHold = Schema.Struct({ id: ReceiptItemId, hold_id: Schema.NullOr(HoldId) })
const ReceiptAt = Schema.Struct({ receiptId: ReceiptId, now: Schema.DateFromSelf })

export interface ItemOutcomeUpdate {
  readonly status: "passed" | "partial" | "failed" | "expired"
  readonly tool_id: string | null
  readonly provider: string | null
  readonly fallback_from: string | null
  readonly cost_credits: bigint
  readonly result: unknown
  readonly result_hash: string | null
  readonly check_id: string | null
  readonly check_version: string | null
  readonly reason: string | null
  readonly error_code: string | null
  readonly finished_at: Date
}

export class ItemsRepo extends Effect.Service<ItemsRepo>()("Purchasing/ItemsRepo", {
  effect: Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient

    /**
     * A purchase's items, written in the transaction of their holds; one parameter for any
     * number (a job's thousand items too).
     */
    const insertItems = (items: ReadonlyArray<NewItem>) =>
      sql`
        INSERT INTO receipt_items (id, receipt_id, idx, input, status, claimed_by, claimed_until, started_at, runs, hold_id)
        SELECT i.id, i.receipt_id, i.idx, i.input, i.status, i.claimed_by, i.claimed_until, i.started_at, i.runs, i.hold_id
        FROM jsonb_to_recordset(${JSON.stringify(items)}::jsonb)
          AS i (id uuid, receipt_id uuid, idx int, input jsonb, status text, claimed_by text, claimed_until timestamptz,
                started_at timestamptz, runs int, hold_id uuid)`.pipe(Effect.asVoid, Effect.orDie)

    const findItems = SqlSchema.findAll({
      Request: ReceiptId,
      Result: PurchaseItem,
      execute: (receiptId) => sql`SELECT * FROM receipt_items WHERE receipt_id = ${receiptId} ORDER BY idx`
    })
    const items = (receiptId: ReceiptId) => findItems(receiptId).pipe(Effect.orDie)

    const findPage = SqlSchema.findAll({
      Request: Schema.Struct({ receiptId: ReceiptId, afterIndex: Schema.Number, limit: Schema.Number }),
      Result: PurchaseItem,
      execute: ({ afterIndex, limit, receiptId }) =>
        sql`SELECT * FROM receipt_items WHERE receipt_id = ${receiptId} AND idx > ${afterIndex} ORDER BY idx LIMIT ${limit}`
    })
    /** Up to `limit` items of a receipt after the index `afterIndex` (-1 for the first), in order. */
    const itemsPage = (receiptId: ReceiptId, afterIndex: number, limit: number) =>
      findPage({ receiptId, afterIndex, limit }).pipe(Effect.orDie)

    const findItemAt = SqlSchema.findOne({
      Request: Schema.Struct({ receiptId: ReceiptId, index: Schema.Number }),
      Result: PurchaseItem,
      execute: ({ index, receiptId }) =>
        sql`SELECT * FROM receipt_items WHERE receipt_id = ${receiptId} AND idx = ${index}`
    })
    const itemAt = (receiptId: ReceiptId, index: number) => findItemAt({ receiptId, index }).pipe(Effect.orDie)

    /**
     * Locks the running items that `owner` still holds the claim of, in id order; answers
     * their ids. Each is found by its key (purchase_lock_claimed_items, migration 0024),
     * whatever the statistics say of the open items' partial index.
     */
    const lockClaimed = SqlSchema.findAll({
      Request: Schema.Struct({ itemIds: Schema.Array(Schema.String), owner: Schema.String }),
      Result: Schema.Struct({ id: Schema.String }),
      execute: ({ itemIds, owner }) =>
        sql`SELECT id FROM purchase_lock_claimed_items(${itemIds as Array<string>}::uuid[], ${owner}) AS id`
    })
    const lockClaimedItems = (itemIds: ReadonlyArray<string>, owner: string) =>
      lockClaimed({ itemIds, owner }).pipe(Effect.map((rows) => new Set(rows.map((row) => row.id))), Effect.orDie)

    /** Records the outcomes of many items in one statement. */
    const recordOutcomes = (outcomes: ReadonlyArray<{ readonly id: string; readonly outcome: ItemOutcomeUpdate }>) =>
      outcomes.length === 0 ? Effect.void : sql`
        UPDATE receipt_items i SET status = d.status, tool_id = d.tool_id, provider = d.provider,
          fallback_from = d.fallback_from, cost_credits = d.cost_credits, result = d.result, result_hash = d.result_hash,
          check_id = d.check_id, check_version = d.check_version, reason = d.reason, error_code = d.error_code,
          finished_at = d.finished_at, claimed_until = NULL
        FROM jsonb_to_recordset(${
        JSON.stringify(outcomes.map(({ id, outcome }) => ({
          ...outcome,
          id,
          cost_credits: outcome.cost_credits.toString(),
          finished_at: outcome.finished_at.toISOString()
        })))
      }::jsonb) AS d(id uuid, status text, tool_id uuid, provider text, fallback_from uuid, cost_credits bigint,
          result jsonb, result_hash text, check_id text, check_version text, reason text, error_code text,
          finished_at timestamptz)
        WHERE i.id = d.id`.pipe(Effect.asVoid, Effect.orDie)

    const recordOutcome = (itemId: string, outcome: ItemOutcomeUpdate) =>
      sql`
        UPDATE receipt_items SET status = ${outcome.status}, tool_id = ${outcome.tool_id}, provider = ${outcome.provider},
          fallback_from = ${outcome.fallback_from}, cost_credits = ${outcome.cost_credits.toString()},
          result = ${
        outcome.result === null ? null : JSON.stringify(outcome.result)
      }, result_hash = ${outcome.result_hash},
          check_id = ${outcome.check_id}, check_version = ${outcome.check_version}, reason = ${outcome.reason},
          error_code = ${outcome.error_code}, finished_at = ${outcome.finished_at}, claimed_until = NULL
        WHERE id = ${itemId}`.pipe(Effect.asVoid, Effect.orDie)

    const claimPending = SqlSchema.findAll({
      Request: Schema.Struct({
        receiptId: Schema.String,
        limit: Schema.Number,
        owner: Schema.String,
        now: Schema.DateFromSelf,
        until: Schema.DateFromSelf
      }),
      Result: PurchaseItem,
      execute: ({ limit, now, owner, receiptId, until }) =>
        sql`
          UPDATE receipt_items SET status = 'running', claimed_by = ${owner}, claimed_until = ${until},
            runs = runs + 1, started_at = COALESCE(started_at, ${now})
          WHERE id IN (
            SELECT id FROM receipt_items WHERE receipt_id = ${receiptId} AND status = 'pending'
            ORDER BY idx LIMIT ${limit} FOR UPDATE SKIP LOCKED)
          RETURNING *`
    })
    /** Takes up to `limit` pending items of a receipt, in order, for `owner`. */
    const claimItems = (receiptId: string, limit: number, owner: string, now: Date, until: Date) =>
      claimPending({ receiptId, limit, owner, now, until }).pipe(
        Effect.map((rows) => [...rows].sort((a, b) => a.idx - b.idx)),
        Effect.orDie
      )

    /** Puts items whose claim lapsed (their replica died) back in the queue. */
    const reclaimLapsed = (receiptId: string, now: Date) =>
      sql`
        UPDATE receipt_items SET status = 'pending', claimed_by = NULL, claimed_until = NULL
        WHERE receipt_id = ${receiptId} AND status = 'running' AND claimed_until < ${now}`.pipe(
        Effect.asVoid,
        Effect.orDie
      )

    /** Gives back the claims of `owner` (a worker stopping), for items of jobs only. */
    const unclaimOwner = (owner: string) =>
      sql`
        UPDATE receipt_items i SET status = 'pending', claimed_by = NULL, claimed_until = NULL
        FROM receipts r
        WHERE i.claimed_by = ${owner} AND i.status = 'running' AND r.id = i.receipt_id AND r.job_id IS NOT NULL`.pipe(
        Effect.asVoid,
        Effect.orDie
      )

    const countOpen = SqlSchema.single({
      Request: Schema.String,
      Result: Schema.Struct({ pending: Schema.Number, running: Schema.Number }),
      execute: (receiptId) =>
        sql`
          SELECT count(*) FILTER (WHERE status = 'pending')::int AS pending,
                 count(*) FILTER (WHERE status = 'running')::int AS running
          FROM receipt_items WHERE receipt_id = ${receiptId} AND status IN ('pending', 'running')`
    })
    const countOpenItems = (receiptId: string) => countOpen(receiptId).pipe(Effect.orDie)

    const expirePendingRows = SqlSchema.findAll({
      Request: Schema.Struct({ receiptId: Schema.String, now: Schema.DateFromSelf, reason: Schema.String }),
      Result: ItemHold,
      execute: ({ now, reason, receiptId }) =>
        sql`
          UPDATE receipt_items SET status = 'expired', finished_at = ${now}, reason = ${reason},
            claimed_by = NULL, claimed_until = NULL
          WHERE receipt_id = ${receiptId} AND status = 'pending'
          RETURNING id, hold_id`
    })
    /** Marks every still-pending item expired; answers their holds (to release). */
    const expirePending = (receiptId: string, now: Date, reason: string) =>
      expirePendingRows({ receiptId, now, reason }).pipe(Effect.orDie)

    const findLapsed = SqlSchema.findAll({
      Request: ReceiptAt,
      Result: PurchaseItem,
      execute: ({ now, receiptId }) =>
        sql`
          SELECT * FROM receipt_items
          WHERE receipt_id = ${receiptId} AND status = 'running' AND claimed_until < ${now}
          FOR UPDATE SKIP LOCKED`
    })
    /** Items of a direct purchase still running after their claim lapsed (the replica died). */
    const lapsedDirectItems = (receiptId: ReceiptId, now: Date) => findLapsed({ receiptId, now }).pipe(Effect.orDie)

    const findLive = SqlSchema.findOne({
      Request: ReceiptAt,
      Result: Schema.Struct({ id: Schema.String }),
      execute: ({ now, receiptId }) =>
        sql`
          SELECT id FROM receipt_items
          WHERE receipt_id = ${receiptId} AND status = 'running' AND claimed_until >= ${now} LIMIT 1`
    })
    /** Whether an item of the receipt is still claimed by a live process. */
    const hasLiveItems = (receiptId: ReceiptId, now: Date) =>
      findLive({ receiptId, now }).pipe(Effect.map(Option.isSome), Effect.orDie)

    const markRefunded = (itemId: ReceiptItemId, amount: bigint) =>
      sql`UPDATE receipt_items SET refunded_credits = refunded_credits + ${amount.toString()} WHERE id = ${itemId}`
        .pipe(Effect.asVoid, Effect.orDie)

    /** Forgets results of items finished before `before` (hashes stay on the receipt). */
    const purgeResults = (before: Date) =>
      sql`
        UPDATE receipt_items SET result = NULL
        WHERE id IN (SELECT id FROM receipt_items WHERE result IS NOT NULL AND finished_at < ${before} LIMIT 5000)`
        .pipe(
          Effect.asVoid,
          Effect.orDie
        )

    /** Renews the claims `owner` holds on running items (a direct purchase still at work). */
    const renewClaims = (owner: string, until: Date) =>
      sql`UPDATE receipt_items SET claimed_until = ${until} WHERE claimed_by = ${owner} AND status = 'running'`.pipe(
        Effect.asVoid,
        Effect.orDie
      )

    return {
      insertItems,
      items,
      itemsPage,
      itemAt,
      lockClaimedItems,
      recordOutcomes,
      recordOutcome,
      claimItems,
      reclaimLapsed,
      unclaimOwner,
      countOpenItems,
      expirePending,
      lapsedDirectItems,
      hasLiveItems,
      markRefunded,
      purgeResults,
      renewClaims
    } as const
  })
}) {}
