import { SqlClient, type Statement } from "@effect/sql"
import { type Brand, Effect } from "effect"

/** A condition another capability's statement would splice in. */
export const gate = (sql: SqlClient.SqlClient, orgId: string): Statement.Fragment => sql`org_id = ${orgId}`

/** A branded fragment, imported as a type. */
export type GateFragment = Statement.Fragment & Brand.Brand<"Fixture/GateFragment">

/** A service whose method answers a fragment. */
export class FenceService extends Effect.Service<FenceService>()("Fixture/FenceService", {
  effect: Effect.map(SqlClient.SqlClient, (sql) => ({
    condition: (orgId: string) => sql`org_id = ${orgId}`
  }))
}) {}

/** Values that are no fragment: a number, and an effect that needs the SQL client to run its own statement. */
export const limit = 10

export const countOrgs = Effect.flatMap(SqlClient.SqlClient, (sql) => sql`SELECT count(*) AS n FROM orgs`)
