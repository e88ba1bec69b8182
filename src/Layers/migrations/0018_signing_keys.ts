import { SqlClient } from "@effect/sql"
import { Effect } from "effect"

/**
 * Receipt signing keys (Ed25519): the public key as a JWK, published at
 * `/.well-known/jwks.json`, the private key sealed by the secret box. The newest generation
 * signs; older ones stay published so signatures they made can still be checked. A gateway
 * call keeps the SHA-256 of what the caller sent and of what it received, so its signed
 * record can name both.
 */
export default Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  yield* sql`
    CREATE TABLE signing_keys (
      kid text PRIMARY KEY,
      generation integer NOT NULL UNIQUE CHECK (generation > 0),
      public_jwk jsonb NOT NULL,
      private_sealed text NOT NULL,
      created_at timestamptz NOT NULL
    )`
  yield* sql`ALTER TABLE gateway_calls ADD COLUMN request_sha256 text, ADD COLUMN response_sha256 text`
})
