import { SqlClient } from "@effect/sql"
import { Effect } from "effect"

/**
 * A key still running is tied to a live process: `lease_until` is renewed while its
 * purchase runs, so a key whose lease lapsed belongs to a process that died and the next
 * request under it finishes and replays that purchase (see InterruptedPurchases.ts).
 * Keys taken before this migration keep a null lease and lapse with their items' claims.
 */
export default Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  yield* sql`ALTER TABLE idempotency_keys ADD COLUMN lease_until timestamptz`
})
