import { SqlClient, SqlSchema } from "@effect/sql"
import { Effect, Schema } from "effect"
import { SigningKey } from "../../Domain/SigningKey.js"

/** Signing keys, newest generation first; rows decode to the `SigningKey` model. */
export class SigningKeysRepo extends Effect.Service<SigningKeysRepo>()("Receipts/SigningKeysRepo", {
  effect: Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient

    const newestKey = SqlSchema.findAll({
      Request: Schema.Void,
      Result: SigningKey,
      execute: () => sql`SELECT * FROM signing_keys ORDER BY generation DESC LIMIT 1`
    })
    const allKeys = SqlSchema.findAll({
      Request: Schema.Void,
      Result: SigningKey,
      execute: () => sql`SELECT * FROM signing_keys ORDER BY generation DESC`
    })
    const insertKey = SqlSchema.findAll({
      Request: SigningKey.insert,
      Result: Schema.Struct({ kid: Schema.String }),
      execute: (row) =>
        sql`INSERT INTO signing_keys ${sql.insert(row)} ON CONFLICT (generation) DO NOTHING RETURNING kid`
    })

    /** The newest key, if any. */
    const newest = Effect.map(newestKey(undefined), (rows) => rows[0]).pipe(Effect.orDie)

    /** Every key ever made (a handful: one per rotation period). */
    const all = allKeys(undefined).pipe(Effect.orDie)

    /**
     * Writes a key of the given generation unless another process wrote that generation
     * first: the unique generation lets only one rotation win; the loser reads the winner's.
     * Answers whether this one was written.
     */
    const insert = (key: typeof SigningKey.insert.Type) =>
      insertKey(key).pipe(Effect.map((rows) => rows.length > 0), Effect.orDie)

    return { newest, all, insert } as const
  })
}) {}
