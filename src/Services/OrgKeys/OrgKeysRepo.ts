import { SqlClient, SqlSchema } from "@effect/sql"
import { Effect, Schema } from "effect"
import { OrgKeyId } from "../../Domain/Ids.js"
import { statementRows } from "../StatementRows.js"

/** SQL for org keys: the SHA-256 of the `ok_` secret and its 10-character prefix; rows decoded by `OrgKeyRow`. */
export const OrgKeyRow = Schema.Struct({
  id: OrgKeyId,
  name: Schema.String,
  scope: Schema.Literal("read", "write"),
  prefix: Schema.String,
  created_by_email: Schema.String,
  created_at: Schema.DateFromSelf,
  last_used_at: Schema.NullOr(Schema.DateFromSelf)
})
export type OrgKeyRow = typeof OrgKeyRow.Type

export interface NewOrgKey {
  readonly id: string
  readonly orgId: string
  readonly name: string
  readonly scope: "read" | "write"
  readonly prefix: string
  readonly hash: string
  readonly createdBy: string
  readonly createdByEmail: string
  readonly createdAt: Date
}

export class OrgKeysRepo extends Effect.Service<OrgKeysRepo>()("OrgKeys/OrgKeysRepo", {
  effect: Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const keyRows = statementRows(OrgKeyRow)

    const countActiveOf = SqlSchema.single({
      Request: Schema.String,
      Result: Schema.Struct({ n: Schema.NumberFromString }),
      execute: (orgId) => sql`SELECT count(*) AS n FROM org_keys WHERE org_id = ${orgId} AND revoked_at IS NULL`
    })

    const listActiveOf = SqlSchema.findAll({
      Request: Schema.String,
      Result: OrgKeyRow,
      execute: (orgId) =>
        sql`
          SELECT id, name, scope, prefix, created_by_email, created_at, last_used_at FROM org_keys
          WHERE org_id = ${orgId} AND revoked_at IS NULL
          ORDER BY created_at DESC, id DESC`
    })

    const countActive = (orgId: string) => countActiveOf(orgId).pipe(Effect.map((row) => row.n), Effect.orDie)

    const insert = (key: NewOrgKey) =>
      keyRows.single(sql`
            INSERT INTO org_keys (id, org_id, name, scope, prefix, key_hash, created_by, created_by_email, created_at)
            VALUES (${key.id}, ${key.orgId}, ${key.name}, ${key.scope}, ${key.prefix}, ${key.hash}, ${key.createdBy},
                    ${key.createdByEmail}, ${key.createdAt})
            RETURNING id, name, scope, prefix, created_by_email, created_at, last_used_at`).pipe(Effect.orDie)

    const listActive = (orgId: string) => listActiveOf(orgId).pipe(Effect.orDie)

    const revoke = (orgId: string, keyId: string, now: Date) =>
      sql`
        UPDATE org_keys SET revoked_at = ${now}
        WHERE id = ${keyId} AND org_id = ${orgId} AND revoked_at IS NULL RETURNING id`.pipe(
        Effect.map((rows) => rows.length > 0),
        Effect.orDie
      )

    return { countActive, insert, listActive, revoke } as const
  })
}) {}
