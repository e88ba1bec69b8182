import { SqlClient, SqlSchema } from "@effect/sql"
import { Effect, Option, Schema } from "effect"

/** Which providers' requests go unsigned: a row per provider switched on or off; no row is on. */
export class ProviderSigningRepo extends Effect.Service<ProviderSigningRepo>()("BotAuth/ProviderSigningRepo", {
  effect: Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient

    const unsignedRows = SqlSchema.findAll({
      Request: Schema.Void,
      Result: Schema.Struct({ provider_id: Schema.String }),
      execute: () => sql`SELECT provider_id FROM provider_request_signing WHERE NOT signs`
    })
    const settingRow = SqlSchema.findOne({
      Request: Schema.String,
      Result: Schema.Struct({ signs: Schema.Boolean }),
      execute: (providerId) =>
        sql`SELECT signs FROM provider_request_signing WHERE provider_id = ${providerId} FOR UPDATE`
    })

    /** The providers switched off (a handful at most). */
    const unsigned = Effect.map(unsignedRows(undefined), (rows) => new Set(rows.map((row) => row.provider_id))).pipe(
      Effect.orDie
    )

    /** Whether the provider's requests are signed, as stored (locked until the transaction ends). */
    const signsNow = (providerId: string) =>
      Effect.map(settingRow(providerId), Option.match({ onNone: () => true, onSome: (row) => row.signs })).pipe(
        Effect.orDie
      )

    /** Stores the setting; fails with the SqlError of the foreign key when no such provider exists. */
    const store = (providerId: string, signs: boolean, at: Date) =>
      sql`
        INSERT INTO provider_request_signing (provider_id, signs, updated_at) VALUES (${providerId}, ${signs}, ${at})
        ON CONFLICT (provider_id) DO UPDATE SET signs = excluded.signs, updated_at = excluded.updated_at`.pipe(
        Effect.asVoid
      )

    return { unsigned, signsNow, store } as const
  })
}) {}
