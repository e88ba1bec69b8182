import { SqlClient } from "@effect/sql"
import { Effect } from "effect"

/** SQL for org keys: the SHA-256 of the `ok_` secret and its 10-character prefix. */
export interface OrgKeyRow {
  readonly id: string
  readonly name: string
  readonly scope: "read" | "write"
  readonly prefix: string
  readonly created_by_email: string
  readonly created_at: Date
  readonly last_used_at: Date | null
}

export class OrgKeysRepo extends Effect.Service<OrgKeysRepo>()("OrgKeys/OrgKeysRepo", {
  effect: Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient

    const countActive = (orgId: string) =>
      sql<{ n: string }>`SELECT count(*) AS n FROM org_keys WHERE org_id = ${orgId} AND revoked_at IS NULL`.pipe(
        Effect.map((rows) => Number(rows[0]!.n)),
        Effect.orDie
      )

    const insert = (key: {
      id: string
      orgId: string
      name: string
      scope: "read" | "write"
      prefix: string
      hash: string
      createdBy: string
      createdByEmail: string
      createdAt: Date
    }) =>
      sql<OrgKeyRow>`
        INSERT INTO org_keys (id, org_id, name, scope, prefix, key_hash, created_by, created_by_email, created_at)
        VALUES (${key.id}, ${key.orgId}, ${key.name}, ${key.scope}, ${key.prefix}, ${key.hash}, ${key.createdBy},
                ${key.createdByEmail}, ${key.createdAt})
        RETURNING id, name, scope, prefix, created_by_email, created_at, last_used_at`.pipe(
        Effect.map((rows) => rows[0]!),
        Effect.orDie
      )

    const listActive = (orgId: string) =>
      sql<OrgKeyRow>`
        SELECT id, name, scope, prefix, created_by_email, created_at, last_used_at FROM org_keys
        WHERE org_id = ${orgId} AND revoked_at IS NULL
        ORDER BY created_at DESC, id DESC`.pipe(Effect.orDie)

    const revoke = (orgId: string, keyId: string, now: Date) =>
      sql<{ id: string }>`
        UPDATE org_keys SET revoked_at = ${now}
        WHERE id = ${keyId} AND org_id = ${orgId} AND revoked_at IS NULL RETURNING id`.pipe(
        Effect.map((rows) => rows.length > 0),
        Effect.orDie
      )

    return { countActive, insert, listActive, revoke } as const
  })
}) {}
