import { SqlClient } from "@effect/sql"
import { Effect } from "effect"

/**
 * Web Bot Auth: the Ed25519 keys that sign the service's requests to providers (RFC 9421
 * `Signature`), published at `/.well-known/http-message-signatures-directory`. A key signs
 * from `signs_from` until `signs_until`, and stays published until `expires_at`, when the last
 * signature it made has expired. Its private key is kept only sealed by the secret box.
 * A provider whose requests go unsigned has a row with `signs = false`; no row means signed.
 */
export default Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  yield* sql`
    CREATE TABLE bot_signing_keys (
      kid text PRIMARY KEY,
      generation integer NOT NULL UNIQUE CHECK (generation > 0),
      public_jwk jsonb NOT NULL,
      private_sealed text NOT NULL,
      created_at timestamptz NOT NULL,
      signs_from timestamptz NOT NULL,
      signs_until timestamptz NOT NULL CHECK (signs_until > signs_from),
      expires_at timestamptz NOT NULL CHECK (expires_at >= signs_until)
    )`
  yield* sql`
    CREATE TABLE provider_request_signing (
      provider_id text PRIMARY KEY REFERENCES providers (id) ON DELETE CASCADE,
      signs boolean NOT NULL,
      updated_at timestamptz NOT NULL
    )`
})
