import { SqlClient, SqlSchema } from "@effect/sql"
import { Clock, Effect, Schema } from "effect"
import { generateKeyPairSync, randomBytes, randomUUID } from "node:crypto"
import type { JWK } from "oidc-provider"
import { SecretBox } from "../SecretBox/SecretBox.js"

/**
 * The authorization server's own secrets: the key that signs its ID tokens (RS256, the
 * algorithm every client accepts by default) and the keys that sign its cookies. Made once,
 * by whichever replica starts first, and kept sealed (SecretBox) in `oauth_provider_keys`,
 * so every replica and every restart uses the same ones.
 */
export interface ProviderKeys {
  readonly signing: JWK
  readonly cookies: ReadonlyArray<string>
}

const fresh = (): ProviderKeys => {
  const { privateKey } = generateKeyPairSync("rsa", { modulusLength: 2048 })
  return {
    signing: { ...privateKey.export({ format: "jwk" }), kid: randomUUID(), alg: "RS256", use: "sig" } as JWK,
    cookies: [randomBytes(32).toString("base64url")]
  }
}

const SealedRow = Schema.Struct({ sealed: Schema.String })

export const loadProviderKeys = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  const box = yield* SecretBox
  const now = new Date(yield* Clock.currentTimeMillis)
  const read = SqlSchema.single({
    Request: Schema.Void,
    Result: SealedRow,
    execute: () => sql`SELECT sealed FROM oauth_provider_keys WHERE id = 1`
  })
  // Made only when none are stored (an RSA key takes a quarter second of CPU); two replicas
  // starting together both try, the first row stays and both read it.
  const made = Effect.gen(function*() {
    yield* sql`
      INSERT INTO oauth_provider_keys (id, sealed, created_at) VALUES (1, ${yield* box.seal(
      JSON.stringify(fresh())
    )}, ${now})
      ON CONFLICT (id) DO NOTHING`
    return yield* read(undefined)
  })
  const stored = yield* read(undefined).pipe(Effect.catchTag("NoSuchElementException", () => made))
  const opened = yield* Effect.either(box.open(stored.sealed))
  if (opened._tag === "Right") return JSON.parse(opened.right) as ProviderKeys
  // SECRETS_ENCRYPTION_KEY changed: new keys. Sign-ins in progress start again; access and refresh
  // tokens are records, not signed, so they keep working. One replica's new keys win.
  yield* Effect.logWarning("The OAuth server's keys were sealed with another SECRETS_ENCRYPTION_KEY: made new ones")
  yield* sql`
    UPDATE oauth_provider_keys SET sealed = ${yield* box.seal(JSON.stringify(fresh()))}, created_at = ${now}
    WHERE id = 1 AND sealed = ${stored.sealed}`
  return JSON.parse(yield* box.open((yield* read(undefined)).sealed)) as ProviderKeys
}).pipe(Effect.orDie)
