import { Model, SqlClient, SqlSchema } from "@effect/sql"
import { Effect, Schema } from "effect"
import type { OrgKeyId } from "../../Domain/Ids.js"
import { OrgId } from "../../Domain/Ids.js"
import { OrgKey } from "../../Domain/OrgKey.js"

/** Org keys (the SHA-256 of the `ok_` secret and its 10-character prefix), through the `OrgKey` model. */
export class OrgKeysRepo extends Effect.Service<OrgKeysRepo>()("OrgKeys/OrgKeysRepo", {
  effect: Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const rows = yield* Model.makeRepository(OrgKey, {
      tableName: "org_keys",
      spanPrefix: "OrgKeysRepo",
      idColumn: "id"
    })

    const countActiveOf = SqlSchema.single({
      Request: OrgId,
      Result: Schema.Struct({ n: Schema.NumberFromString }),
      execute: (orgId) => sql`SELECT count(*) AS n FROM org_keys WHERE org_id = ${orgId} AND revoked_at IS NULL`
    })

    const listActiveOf = SqlSchema.findAll({
      Request: OrgId,
      Result: OrgKey,
      execute: (orgId) =>
        sql`SELECT * FROM org_keys WHERE org_id = ${orgId} AND revoked_at IS NULL ORDER BY created_at DESC, id DESC`
    })

    const countActive = (orgId: OrgId) => countActiveOf(orgId).pipe(Effect.map((row) => row.n), Effect.orDie)
    const listActive = (orgId: OrgId) => listActiveOf(orgId).pipe(Effect.orDie)

    const revoke = (orgId: OrgId, keyId: OrgKeyId, now: Date) =>
      sql`
        UPDATE org_keys SET revoked_at = ${now}
        WHERE id = ${keyId} AND org_id = ${orgId} AND revoked_at IS NULL RETURNING id`.pipe(
        Effect.map((rows) => rows.length > 0),
        Effect.orDie
      )

    return { countActive, insert: rows.insert, listActive, revoke } as const
  })
}) {}
