import { SqlClient } from "@effect/sql"
import { Effect } from "effect"

/**
 * Catalogue searches read a copy kept in memory (Services/Catalogue/Catalogue.ts), which
 * builds its own search text: the column they used to match against goes.
 */
export default Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  yield* sql`ALTER TABLE catalogue_endpoints DROP COLUMN search_text`
})
