import { SqlClient } from "@effect/sql"
import { Effect } from "effect"

/**
 * A rotated webhook secret keeps the one it replaced (sealed) until the overlap ends; while
 * it lasts, deliveries are signed with both.
 */
export default Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  yield* sql`
    ALTER TABLE webhook_endpoints
      ADD COLUMN previous_secret_enc text,
      ADD COLUMN previous_secret_expires_at timestamptz,
      ADD CONSTRAINT webhook_previous_secret CHECK ((previous_secret_enc IS NULL) = (previous_secret_expires_at IS NULL))`
})
