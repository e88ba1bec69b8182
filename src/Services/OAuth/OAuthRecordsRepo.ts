import { SqlClient, SqlSchema } from "@effect/sql"
import { Effect, Option, Schema, Struct } from "effect"
import { OAuthRecord } from "../../Domain/OAuthRecord.js"
import { statementRows } from "../StatementRows.js"

/**
 * The authorization server's records in PostgreSQL, one row per record of the library's
 * models (`AccessToken`, `AuthorizationCode`, `RefreshToken`, `Grant`, `Client`,
 * `Interaction`, `Session`, ...). A record past its expiry is not found, whatever the row
 * still says; `now` comes from the service's clock. Written and read through the
 * `OAuthRecord` model.
 */
const PayloadRow = Schema.Struct(Struct.pick(OAuthRecord.fields, "payload"))

export class OAuthRecordsRepo extends Effect.Service<OAuthRecordsRepo>()("OAuth/OAuthRecordsRepo", {
  effect: Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient

    const upsertRecord = SqlSchema.void({
      Request: OAuthRecord.insert,
      execute: (record) =>
        sql`
          INSERT INTO oauth_records ${sql.insert(record)}
          ON CONFLICT (model, id) DO UPDATE SET payload = EXCLUDED.payload, grant_id = EXCLUDED.grant_id,
            uid = EXCLUDED.uid, user_code = EXCLUDED.user_code, expires_at = EXCLUDED.expires_at`
    })
    const upsert = (record: typeof OAuthRecord.insert.Type) => upsertRecord(record).pipe(Effect.orDie)

    const findBy = (column: "id" | "uid" | "user_code") =>
      SqlSchema.findOne({
        Request: Schema.Struct({ model: Schema.String, value: Schema.String, now: Schema.DateFromSelf }),
        Result: PayloadRow,
        execute: ({ model, now, value }) =>
          sql`
            SELECT payload FROM oauth_records
            WHERE model = ${model} AND ${sql(column)} = ${value} AND (expires_at IS NULL OR expires_at > ${now})`
      })
    const byId = findBy("id")
    const byUid = findBy("uid")
    const byUserCode = findBy("user_code")

    const find = (model: string, id: string, now: Date) => byId({ model, value: id, now }).pipe(Effect.orDie)
    const findByUid = (model: string, uid: string, now: Date) => byUid({ model, value: uid, now }).pipe(Effect.orDie)
    const findByUserCode = (model: string, userCode: string, now: Date) =>
      byUserCode({ model, value: userCode, now }).pipe(Effect.orDie)

    /**
     * Marks a one-time record (a code, a refresh token) used, in one conditional statement:
     * of two uses at the same moment exactly one takes it. Answers the record's grant when
     * this use did not take it (already used: the grant must be revoked), none when it did.
     * A record that is not there takes nothing and names no grant.
     */
    const consumeRows = statementRows(Schema.Struct({ taken: Schema.Boolean, grant_id: Schema.NullOr(Schema.String) }))
    const consume = (model: string, id: string, consumedAt: number) =>
      consumeRows.single(sql`
        WITH taken AS (
          UPDATE oauth_records SET payload = jsonb_set(payload, '{consumed}', to_jsonb(${consumedAt}::bigint))
          WHERE model = ${model} AND id = ${id} AND NOT (payload ? 'consumed')
          RETURNING id)
        SELECT EXISTS (SELECT 1 FROM taken) AS taken,
          (SELECT grant_id FROM oauth_records WHERE model = ${model} AND id = ${id}) AS grant_id`).pipe(
        Effect.map((row) => row.taken ? Option.none() : Option.fromNullable(row.grant_id)),
        Effect.orDie
      )

    const destroy = (model: string, id: string) =>
      sql`DELETE FROM oauth_records WHERE model = ${model} AND id = ${id}`.pipe(Effect.asVoid, Effect.orDie)

    /**
     * Every token and code of a grant, whatever its model: a revoked grant leaves nothing
     * usable. Its connection ends with it, whoever revoked it (an owner, or the library on a
     * code or refresh token used twice).
     */
    const destroyGrant = (grantId: string, now: Date) =>
      Effect.all([
        sql`DELETE FROM oauth_records WHERE grant_id = ${grantId}`,
        sql`DELETE FROM oauth_records WHERE model = 'Grant' AND id = ${grantId}`,
        sql`UPDATE oauth_connections SET revoked_at = ${now} WHERE grant_id = ${grantId} AND revoked_at IS NULL`
      ]).pipe(Effect.asVoid, Effect.orDie)

    /** Deletes up to `batch` records past their expiry; answers how many went. */
    const deleteExpired = (now: Date, batch: number) =>
      sql`
        DELETE FROM oauth_records WHERE (model, id) IN (
          SELECT model, id FROM oauth_records WHERE expires_at <= ${now} LIMIT ${batch})
        RETURNING 1`.pipe(Effect.map((rows) => rows.length), Effect.orDie)

    return {
      upsert,
      deleteExpired,
      find: (model: string, id: string, now: Date) =>
        Effect.map(find(model, id, now), (row) => row._tag === "Some" ? row.value.payload : undefined),
      findByUid: (model: string, uid: string, now: Date) =>
        Effect.map(findByUid(model, uid, now), (row) => row._tag === "Some" ? row.value.payload : undefined),
      findByUserCode: (model: string, userCode: string, now: Date) =>
        Effect.map(findByUserCode(model, userCode, now), (row) => row._tag === "Some" ? row.value.payload : undefined),
      consume,
      destroy,
      destroyGrant
    } as const
  })
}) {}
