import { SqlClient } from "@effect/sql"
import { Effect } from "effect"

/**
 * The low-balance alert is armed once an org is funded (its first top-up), not on its
 * trial's credits (LedgerRepo.addCredits; docs/decisions.md): unfunded orgs are disarmed.
 */
export default Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  yield* sql`UPDATE org_balances SET low_alert_armed = false WHERE NOT funded`
})
