import { SqlClient } from "@effect/sql"
import { Effect, Option } from "effect"

/**
 * Idempotency keys of purchases: the answer kept per agent and key, with a lease
 * while its purchase runs.
 * Money columns come back as strings of digits (bigint), timestamps as Dates, jsonb parsed.
 */
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

export class IdempotencyRepo extends Effect.Service<IdempotencyRepo>()("Purchasing/IdempotencyRepo", {
  effect: Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient

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
    const claimKey = (row: IdempotencyRow & { readonly receipt_id: string }) =>
      Effect.flatMap(
        sql<{ locked: boolean }>`
          SELECT pg_try_advisory_xact_lock(hashtextextended(${`idempotency:${row.agent_id}:${row.key}`}, 0)) AS locked`,
        ([lock]) =>
          lock?.locked !== true ? Effect.succeed([]) : sql<{ key: string }>`
        INSERT INTO idempotency_keys ${sql.insert({ ...row })}
        ON CONFLICT (agent_id, key) DO UPDATE SET fingerprint = excluded.fingerprint, status = excluded.status,
          response_status = excluded.response_status, response_body = excluded.response_body,
          receipt_id = excluded.receipt_id, created_at = excluded.created_at, expires_at = excluded.expires_at,
          lease_until = excluded.lease_until
        WHERE idempotency_keys.expires_at < excluded.created_at
        RETURNING key`
      ).pipe(Effect.map((rows) => rows.length > 0), Effect.orDie)

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

    /** Renews the lease of a key whose purchase is still running. */
    const renewLease = (key: { readonly agentId: string; readonly key: string }, until: Date) =>
      sql`
        UPDATE idempotency_keys SET lease_until = ${until}
        WHERE agent_id = ${key.agentId} AND key = ${key.key} AND status = 'in_progress'`.pipe(
        Effect.asVoid,
        Effect.orDie
      )

    return {
      findKey,
      claimKey,
      lockLapsedKey,
      storeAnswer,
      deleteKey,
      purgeKeys,
      renewLease
    } as const
  })
}) {}
