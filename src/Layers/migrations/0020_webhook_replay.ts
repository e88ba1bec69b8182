import { SqlClient } from "@effect/sql"
import { Effect } from "effect"

/**
 * A delivery an owner replays starts its tries and its 24-hour window again from the replay;
 * an endpoint's deliveries are found by their time for "replay everything since".
 */
export default Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  yield* sql`ALTER TABLE webhook_deliveries ADD COLUMN replayed_at timestamptz`
  yield* sql`CREATE INDEX webhook_deliveries_endpoint_time ON webhook_deliveries (endpoint_id, created_at)`
})
