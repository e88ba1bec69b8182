import { SqlClient, SqlSchema } from "@effect/sql"
import { Effect, Schema } from "effect"
import { IdempotencyKey } from "../../Domain/IdempotencyKey.js"
import { AgentId } from "../../Domain/Ids.js"
import { KeyTaken } from "../Idempotency/Idempotent.js"

/**
 * Idempotency keys of purchases (Domain/IdempotencyKey.ts): rows decode to the model, and a
 * key is taken from its insert variant in the transaction that writes its purchase.
 */
const AgentKey = Schema.Struct({ agentId: AgentId, key: Schema.String })

export class IdempotencyRepo extends Effect.Service<IdempotencyRepo>()("Purchasing/IdempotencyRepo", {
  effect: Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient

    const findKeyRow = SqlSchema.findOne({
      Request: AgentKey,
      Result: IdempotencyKey,
      execute: ({ agentId, key }) => sql`SELECT * FROM idempotency_keys WHERE agent_id = ${agentId} AND key = ${key}`
    })
    const findKey = (agentId: AgentId, key: string) => findKeyRow({ agentId, key }).pipe(Effect.orDie)

    const claimRow = SqlSchema.findAll({
      Request: IdempotencyKey.insert,
      Result: Schema.Struct({ one: Schema.Number }),
      execute: (row) =>
        sql`
          WITH key_lock AS (
            SELECT pg_try_advisory_xact_lock(hashtextextended(${`idempotency:${row.agent_id}:${row.key}`}, 0)) AS locked
          )
          INSERT INTO idempotency_keys
            (agent_id, key, fingerprint, status, answer, receipt_id, created_at, expires_at, lease_until)
          SELECT ${row.agent_id}, ${row.key}, ${row.fingerprint}, ${row.status}, ${row.answer}, ${row.receipt_id},
                 ${row.created_at}, ${row.expires_at}, ${row.lease_until}
          FROM key_lock
          WHERE locked
          ON CONFLICT (agent_id, key) DO UPDATE SET fingerprint = excluded.fingerprint, status = excluded.status,
            answer = excluded.answer, receipt_id = excluded.receipt_id, created_at = excluded.created_at,
            expires_at = excluded.expires_at, lease_until = excluded.lease_until
          WHERE idempotency_keys.expires_at < excluded.created_at
          RETURNING 1 AS one`
    })
    /**
     * Takes the key for a purchase, as the first write of the transaction that writes the
     * purchase (its holds, receipt and items), so the key stands exactly when they do. A
     * transaction-scoped advisory lock on the key, tried without waiting, turns a concurrent
     * twin away at once (KeyTaken) instead of queueing it behind this transaction. The key is
     * taken by `INSERT ... ON CONFLICT`, which sees a twin's row committed after this
     * statement's snapshot (a `NOT EXISTS` would not: a twin that committed and let go of the
     * lock just before this statement locked it would go unseen, and the purchase be made
     * twice); a used key still in its retention is left as it is, and KeyTaken.
     */
    const claim = (row: typeof IdempotencyKey.insert.Type) =>
      claimRow(row).pipe(
        Effect.orDie,
        Effect.flatMap((rows) => rows.length > 0 ? Effect.void : Effect.fail(new KeyTaken()))
      )

    const lockLapsedKeyRow = SqlSchema.findOne({
      Request: Schema.Struct({ ...AgentKey.fields, now: Schema.DateFromSelf }),
      Result: IdempotencyKey,
      execute: ({ agentId, key, now }) =>
        sql`
          SELECT * FROM idempotency_keys
          WHERE agent_id = ${agentId} AND key = ${key} AND status = 'in_progress'
            AND COALESCE(lease_until, created_at + interval '5 minutes') < ${now}
          FOR UPDATE SKIP LOCKED`
    })
    /**
     * A key still running whose lease lapsed (its process died), locked for finishing its
     * purchase; none when it is live, done, or being finished by a concurrent request.
     */
    const lockLapsedKey = (agentId: AgentId, key: string, now: Date) =>
      lockLapsedKeyRow({ agentId, key, now }).pipe(Effect.orDie)

    /**
     * Keeps the answer (the JSON of a `PurchaseAnswer`) the key replays from now on. The
     * statement alone may join the one that settles the purchase (made only when
     * `condition` holds).
     */
    /** Keeps a finished purchase's answer under its key. */
    const storeAnswer = (agentId: AgentId, key: string, answer: string) =>
      sql`
        UPDATE idempotency_keys SET status = 'done', answer = ${answer}
        WHERE agent_id = ${agentId} AND key = ${key}`.pipe(Effect.asVoid, Effect.orDie)

    /** Lets a key go whose purchase ended without an answer to keep (a retry runs again). */
    const deleteKey = (agentId: AgentId, key: string) =>
      sql`
        DELETE FROM idempotency_keys
        WHERE agent_id = ${agentId} AND key = ${key} AND status = 'in_progress'`.pipe(Effect.asVoid, Effect.orDie)

    const purgeKeys = (now: Date) =>
      sql`DELETE FROM idempotency_keys WHERE expires_at < ${now} AND status = 'done'`.pipe(Effect.asVoid, Effect.orDie)

    /** Renews the lease of a key whose purchase is still running. */
    const renewLease = (key: { readonly agentId: AgentId; readonly key: string }, until: Date) =>
      sql`
        UPDATE idempotency_keys SET lease_until = ${until}
        WHERE agent_id = ${key.agentId} AND key = ${key.key} AND status = 'in_progress'`.pipe(
        Effect.asVoid,
        Effect.orDie
      )

    return {
      findKey,
      claim,
      lockLapsedKey,
      storeAnswer,
      deleteKey,
      purgeKeys,
      renewLease
    } as const
  })
}) {}
