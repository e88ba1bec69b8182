import { SqlClient } from "@effect/sql"
import { Effect, Option } from "effect"
import type { TaskTypeId } from "../../Domain/TaskType.js"
import type { ToolRow } from "../Tools/ToolsRepo.js"

/**
 * SQL of receipts, their items, jobs and idempotency keys. Money columns come back as
 * strings of digits (bigint), timestamps as Dates, jsonb parsed.
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

export type ItemStatus = "pending" | "running" | "passed" | "partial" | "failed" | "expired"

export interface ItemRow {
  readonly id: string
  readonly receipt_id: string
  readonly idx: number
  readonly input: Record<string, unknown>
  readonly status: ItemStatus
  readonly hold_id: string | null
  readonly tool_id: string | null
  readonly provider: string | null
  readonly fallback_from: string | null
  readonly cost_credits: string
  readonly result: unknown
  readonly result_hash: string | null
  readonly check_id: string | null
  readonly check_version: string | null
  readonly reason: string | null
  readonly error_code: string | null
  readonly refunded_credits: string
  readonly runs: number
  readonly claimed_by: string | null
  readonly claimed_until: Date | null
  readonly started_at: Date | null
  readonly finished_at: Date | null
}

export interface NewItem {
  readonly id: string
  readonly receipt_id: string
  readonly idx: number
  readonly input: Record<string, unknown>
  readonly status: "pending" | "running"
  readonly hold_id: string
  readonly claimed_by: string | null
  readonly claimed_until: Date | null
  readonly started_at: Date | null
  readonly runs: number
}

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

export interface JobRow {
  readonly id: string
  readonly receipt_id: string
  readonly org_id: string
  readonly agent_id: string
  readonly status: "queued" | "running" | "done"
  readonly deadline_at: Date
  readonly lease_owner: string | null
  readonly lease_until: Date | null
  readonly created_at: Date
  readonly started_at: Date | null
  readonly completed_at: Date | null
}

export interface IdempotencyRow {
  readonly agent_id: string
  readonly key: string
  readonly fingerprint: string
  readonly status: "in_progress" | "done"
  readonly response_status: number | null
  readonly response_body: string | null
  readonly receipt_id: string | null
  readonly created_at: Date
  readonly expires_at: Date
  readonly lease_until: Date | null
}

const first = <A>(rows: ReadonlyArray<A>) => Option.fromNullable(rows[0])

export class PurchasingRepo extends Effect.Service<PurchasingRepo>()("Purchasing/PurchasingRepo", {
  effect: Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient

    // -- receipts and items ------------------------------------------------------------

    const insertReceipt = (row: Omit<ReceiptRow, "completed_at">) =>
      sql`INSERT INTO receipts ${sql.insert({ ...row, completed_at: null })}`.pipe(Effect.asVoid, Effect.orDie)

    const insertItems = (items: ReadonlyArray<NewItem>) =>
      Effect.forEach(
        chunk(items, 500),
        (part) =>
          sql`INSERT INTO receipt_items ${
            sql.insert(part.map((item) => ({ ...item, input: JSON.stringify(item.input) })))
          }`,
        { discard: true }
      ).pipe(Effect.orDie)

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

    const items = (receiptId: string) =>
      sql<ItemRow>`SELECT * FROM receipt_items WHERE receipt_id = ${receiptId} ORDER BY idx`.pipe(Effect.orDie)

    const itemAt = (receiptId: string, index: number) =>
      sql<ItemRow>`SELECT * FROM receipt_items WHERE receipt_id = ${receiptId} AND idx = ${index}`.pipe(
        Effect.map(first),
        Effect.orDie
      )

    /** Locks the running items that `owner` still holds the claim of; answers their ids. */
    const lockClaimedItems = (itemIds: ReadonlyArray<string>, owner: string) =>
      sql<{ id: string }>`
        SELECT id FROM receipt_items
        WHERE id = ANY(${itemIds as Array<string>}::uuid[]) AND status = 'running' AND claimed_by = ${owner}
        ORDER BY id FOR UPDATE`.pipe(Effect.map((rows) => new Set(rows.map((row) => row.id))), Effect.orDie)

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
          result = ${outcome.result === null ? null : JSON.stringify(outcome.result)}, result_hash = ${outcome.result_hash},
          check_id = ${outcome.check_id}, check_version = ${outcome.check_version}, reason = ${outcome.reason},
          error_code = ${outcome.error_code}, finished_at = ${outcome.finished_at}, claimed_until = NULL
        WHERE id = ${itemId}`.pipe(Effect.asVoid, Effect.orDie)

    /** Takes up to `limit` pending items of a receipt, in order, for `owner`. */
    const claimItems = (receiptId: string, limit: number, owner: string, now: Date, until: Date) =>
      sql<ItemRow>`
        UPDATE receipt_items SET status = 'running', claimed_by = ${owner}, claimed_until = ${until},
          runs = runs + 1, started_at = COALESCE(started_at, ${now})
        WHERE id IN (
          SELECT id FROM receipt_items WHERE receipt_id = ${receiptId} AND status = 'pending'
          ORDER BY idx LIMIT ${limit} FOR UPDATE SKIP LOCKED)
        RETURNING *`.pipe(
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

    const countOpenItems = (receiptId: string) =>
      sql<{ pending: number; running: number }>`
        SELECT count(*) FILTER (WHERE status = 'pending')::int AS pending,
               count(*) FILTER (WHERE status = 'running')::int AS running
        FROM receipt_items WHERE receipt_id = ${receiptId} AND status IN ('pending', 'running')`.pipe(
        Effect.map((rows) => rows[0] ?? { pending: 0, running: 0 }),
        Effect.orDie
      )

    /** Marks every still-pending item expired; answers their holds (to release). */
    const expirePending = (receiptId: string, now: Date, reason: string) =>
      sql<{ id: string; hold_id: string | null }>`
        UPDATE receipt_items SET status = 'expired', finished_at = ${now}, reason = ${reason},
          claimed_by = NULL, claimed_until = NULL
        WHERE receipt_id = ${receiptId} AND status = 'pending'
        RETURNING id, hold_id`.pipe(Effect.orDie)

    /** Items of a direct purchase still running after their claim lapsed (the replica died). */
    const lapsedDirectItems = (receiptId: string, now: Date) =>
      sql<ItemRow>`
        SELECT * FROM receipt_items
        WHERE receipt_id = ${receiptId} AND status = 'running' AND claimed_until < ${now}
        FOR UPDATE SKIP LOCKED`.pipe(Effect.orDie)

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

    const hasLiveItems = (receiptId: string, now: Date) =>
      sql<{ n: number }>`
        SELECT count(*)::int AS n FROM receipt_items
        WHERE receipt_id = ${receiptId} AND status = 'running' AND claimed_until >= ${now}`.pipe(
        Effect.map((rows) => (rows[0]?.n ?? 0) > 0),
        Effect.orDie
      )

    const markRefunded = (itemId: string, amount: bigint) =>
      sql`UPDATE receipt_items SET refunded_credits = refunded_credits + ${amount.toString()} WHERE id = ${itemId}`
        .pipe(Effect.asVoid, Effect.orDie)

    /** Forgets results of items finished before `before` (hashes stay on the receipt). */
    const purgeResults = (before: Date) =>
      sql`
        UPDATE receipt_items SET result = NULL
        WHERE id IN (SELECT id FROM receipt_items WHERE result IS NOT NULL AND finished_at < ${before} LIMIT 5000)`.pipe(
        Effect.asVoid,
        Effect.orDie
      )

    /** A tool by id or slug (one row; the ranking is read only when a fallback needs it). */
    const toolByRef = (ref: string) =>
      sql<ToolRow>`SELECT * FROM tools WHERE id::text = ${ref.toLowerCase()} OR slug = ${ref} LIMIT 1`.pipe(
        Effect.map(first),
        Effect.orDie
      )

    // -- jobs --------------------------------------------------------------------------

    const insertJob = (row: Omit<JobRow, "lease_owner" | "lease_until" | "started_at" | "completed_at">) =>
      sql`INSERT INTO purchase_jobs ${
        sql.insert({ ...row, lease_owner: null, lease_until: null, started_at: null, completed_at: null })
      }`.pipe(Effect.asVoid, Effect.orDie)

    /** Takes the oldest job nobody holds a live lease on. */
    const claimJob = (owner: string, now: Date, until: Date) =>
      sql<JobRow>`
        UPDATE purchase_jobs SET status = 'running', lease_owner = ${owner}, lease_until = ${until},
          started_at = COALESCE(started_at, ${now})
        WHERE id = (
          SELECT id FROM purchase_jobs
          WHERE status <> 'done' AND (lease_until IS NULL OR lease_until < ${now})
          ORDER BY created_at LIMIT 1 FOR UPDATE SKIP LOCKED)
        RETURNING *`.pipe(Effect.map(first), Effect.orDie)

    const renewJobLease = (jobId: string, owner: string, until: Date) =>
      sql<{ id: string }>`
        UPDATE purchase_jobs SET lease_until = ${until}
        WHERE id = ${jobId} AND lease_owner = ${owner} AND status <> 'done' RETURNING id`.pipe(
        Effect.map((rows) => rows.length > 0),
        Effect.orDie
      )

    const releaseJobLease = (jobId: string, owner: string) =>
      sql`UPDATE purchase_jobs SET lease_owner = NULL, lease_until = NULL WHERE id = ${jobId} AND lease_owner = ${owner}`
        .pipe(Effect.asVoid, Effect.orDie)

    const lockJobForCompletion = (jobId: string, owner: string) =>
      sql<JobRow>`
        SELECT * FROM purchase_jobs WHERE id = ${jobId} AND lease_owner = ${owner} AND status <> 'done' FOR UPDATE`.pipe(
        Effect.map(first),
        Effect.orDie
      )

    const completeJob = (jobId: string, now: Date) =>
      sql`
        UPDATE purchase_jobs SET status = 'done', completed_at = ${now}, lease_owner = NULL, lease_until = NULL
        WHERE id = ${jobId}`.pipe(Effect.asVoid, Effect.orDie)

    const job = (orgId: string, jobId: string) =>
      sql<JobRow>`SELECT * FROM purchase_jobs WHERE id = ${jobId} AND org_id = ${orgId}`.pipe(
        Effect.map(first),
        Effect.orDie
      )

    // -- idempotency keys --------------------------------------------------------------

    const findKey = (agentId: string, key: string) =>
      sql<IdempotencyRow>`SELECT * FROM idempotency_keys WHERE agent_id = ${agentId} AND key = ${key}`.pipe(
        Effect.map(first),
        Effect.orDie
      )

    /**
     * Takes a key for the purchase being written, first thing in its transaction: a new key,
     * or one past its retention. A transaction-scoped advisory lock on the key, tried without
     * waiting, turns a concurrent twin away at once instead of queueing it behind this
     * transaction. Answers whether the key was taken.
     */
    const claimKey = (row: {
      readonly agent_id: string
      readonly key: string
      readonly fingerprint: string
      readonly status: "in_progress" | "done"
      readonly response_status: number | null
      readonly response_body: string | null
      readonly receipt_id: string
      readonly created_at: Date
      readonly expires_at: Date
      readonly lease_until: Date | null
    }) =>
      Effect.flatMap(
        sql<{ locked: boolean }>`
          SELECT pg_try_advisory_xact_lock(hashtextextended(${`idempotency:${row.agent_id}:${row.key}`}, 0)) AS locked`,
        ([lock]) => lock?.locked !== true ? Effect.succeed([]) : sql<{ key: string }>`
        INSERT INTO idempotency_keys ${sql.insert(row)}
        ON CONFLICT (agent_id, key) DO UPDATE SET fingerprint = excluded.fingerprint, status = excluded.status,
          response_status = excluded.response_status, response_body = excluded.response_body,
          receipt_id = excluded.receipt_id, created_at = excluded.created_at, expires_at = excluded.expires_at,
          lease_until = excluded.lease_until
        WHERE idempotency_keys.expires_at < excluded.created_at
        RETURNING key`
      ).pipe(Effect.map((rows) => rows.length > 0), Effect.orDie)

    /** Renews a running direct purchase's lease: its items' claims and its key's lease. */
    const renewLease = (owner: string, key: { readonly agentId: string; readonly key: string } | null, until: Date) =>
      Effect.zipRight(
        sql`UPDATE receipt_items SET claimed_until = ${until} WHERE claimed_by = ${owner} AND status = 'running'`,
        key === null ? Effect.void : sql`
          UPDATE idempotency_keys SET lease_until = ${until}
          WHERE agent_id = ${key.agentId} AND key = ${key.key} AND status = 'in_progress'`
      ).pipe(Effect.asVoid, Effect.orDie)

    /**
     * A key still running whose lease lapsed (its process died), locked for finishing its
     * purchase; none when it is live, done, or being finished by a concurrent request.
     */
    const lockLapsedKey = (agentId: string, key: string, now: Date) =>
      sql<IdempotencyRow>`
        SELECT * FROM idempotency_keys
        WHERE agent_id = ${agentId} AND key = ${key} AND status = 'in_progress'
          AND COALESCE(lease_until, created_at + interval '5 minutes') < ${now}
        FOR UPDATE SKIP LOCKED`.pipe(Effect.map(first), Effect.orDie)

    const lockReceipt = (receiptId: string) =>
      sql<ReceiptRow>`SELECT * FROM receipts WHERE id = ${receiptId} FOR UPDATE`.pipe(Effect.map(first), Effect.orDie)

    const storeAnswer = (agentId: string, key: string, status: number, body: string) =>
      sql`
        UPDATE idempotency_keys SET status = 'done', response_status = ${status}, response_body = ${body}
        WHERE agent_id = ${agentId} AND key = ${key}`.pipe(Effect.asVoid, Effect.orDie)

    const deleteKey = (agentId: string, key: string) =>
      sql`DELETE FROM idempotency_keys WHERE agent_id = ${agentId} AND key = ${key} AND status = 'in_progress'`.pipe(
        Effect.asVoid,
        Effect.orDie
      )

    const purgeKeys = (now: Date) =>
      sql`DELETE FROM idempotency_keys WHERE expires_at < ${now} AND status = 'done'`.pipe(Effect.asVoid, Effect.orDie)

    return {
      insertReceipt,
      insertItems,
      receiptWithTotals,
      listReceipts,
      receiptCursor,
      items,
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
      completeReceipt,
      staleDirectReceipts,
      hasLiveItems,
      markRefunded,
      toolByRef,
      purgeResults,
      insertJob,
      claimJob,
      renewJobLease,
      releaseJobLease,
      lockJobForCompletion,
      completeJob,
      job,
      findKey,
      claimKey,
      renewLease,
      lockLapsedKey,
      lockReceipt,
      storeAnswer,
      deleteKey,
      purgeKeys
    } as const
  })
}) {}

const chunk = <A>(items: ReadonlyArray<A>, size: number): Array<ReadonlyArray<A>> => {
  const out: Array<ReadonlyArray<A>> = []
  for (let i = 0; i < items.length; i += size) out.push(items.slice(i, i + size))
  return out
}
