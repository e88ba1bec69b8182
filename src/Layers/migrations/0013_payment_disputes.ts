import { SqlClient } from "@effect/sql"
import { Effect } from "effect"

/**
 * A payment keeps where its dispute stands (open, then won or lost), so a dispute's closing
 * can give back what its opening took and lift the freeze it caused. Disputes recorded
 * before had only opened.
 */
export default Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  yield* sql`
    ALTER TABLE payments ADD COLUMN dispute_status text CHECK (dispute_status IN ('open', 'won', 'lost'))`
  yield* sql`UPDATE payments SET dispute_status = 'open' WHERE disputed_minor > 0`
})
