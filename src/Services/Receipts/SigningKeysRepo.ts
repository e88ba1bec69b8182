import { SqlClient, SqlSchema } from "@effect/sql"
import { Effect, Schema } from "effect"

/** Signing keys, newest generation first; rows decoded. */
export const SigningKeyRow = Schema.Struct({
  kid: Schema.String,
  generation: Schema.Number,
  public_jwk: Schema.Struct({ kty: Schema.Literal("OKP"), crv: Schema.Literal("Ed25519"), x: Schema.String }),
  private_sealed: Schema.String,
  created_at: Schema.DateFromSelf
})
export type SigningKeyRow = typeof SigningKeyRow.Type

export class SigningKeysRepo extends Effect.Service<SigningKeysRepo>()("Receipts/SigningKeysRepo", {
  effect: Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient

    const newestKey = SqlSchema.findAll({
      Request: Schema.Void,
      Result: SigningKeyRow,
      execute: () => sql`SELECT * FROM signing_keys ORDER BY generation DESC LIMIT 1`
    })
    const allKeys = SqlSchema.findAll({
      Request: Schema.Void,
      Result: SigningKeyRow,
      execute: () => sql`SELECT * FROM signing_keys ORDER BY generation DESC`
    })

    /** The newest key, if any. */
    const newest = Effect.map(newestKey(undefined), (rows) => rows[0]).pipe(Effect.orDie)

    /** Every key ever made (a handful: one per rotation period). */
    const all = allKeys(undefined).pipe(Effect.orDie)

    /**
     * Writes a key of the given generation unless another process wrote that generation
     * first: the unique generation lets only one rotation win; the loser reads the winner's.
     */
    const insert = (row: SigningKeyRow) =>
      sql`
        INSERT INTO signing_keys (kid, generation, public_jwk, private_sealed, created_at)
        VALUES (${row.kid}, ${row.generation}, ${JSON.stringify(row.public_jwk)}::jsonb, ${row.private_sealed},
                ${row.created_at})
        ON CONFLICT (generation) DO NOTHING`.pipe(Effect.asVoid, Effect.orDie)

    return { newest, all, insert } as const
  })
}) {}
