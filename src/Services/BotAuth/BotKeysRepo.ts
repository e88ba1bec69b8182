import { SqlClient, SqlSchema } from "@effect/sql"
import { Effect, Schema } from "effect"
import { BotSigningKey } from "../../Domain/BotSigningKey.js"

/** The keys that sign requests to providers, newest generation first; rows decode to `BotSigningKey`. */
export class BotKeysRepo extends Effect.Service<BotKeysRepo>()("BotAuth/BotKeysRepo", {
  effect: Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient

    const allKeys = SqlSchema.findAll({
      Request: Schema.Void,
      Result: BotSigningKey,
      execute: () => sql`SELECT * FROM bot_signing_keys ORDER BY generation DESC`
    })
    const insertKey = SqlSchema.findAll({
      Request: BotSigningKey.insert,
      Result: Schema.Struct({ kid: Schema.String }),
      execute: (row) =>
        sql`INSERT INTO bot_signing_keys ${sql.insert(row)} ON CONFLICT (generation) DO NOTHING RETURNING kid`
    })

    /** Every key ever made, newest first (one per rotation period: a handful a year). */
    const all = allKeys(undefined).pipe(Effect.orDie)

    /**
     * Writes a key of the given generation unless another process wrote that generation
     * first: the unique generation lets only one rotation win; the loser reads the winner's.
     * Answers whether this one was written.
     */
    const insert = (key: typeof BotSigningKey.insert.Type) =>
      insertKey(key).pipe(Effect.map((rows) => rows.length > 0), Effect.orDie)

    return { all, insert } as const
  })
}) {}
