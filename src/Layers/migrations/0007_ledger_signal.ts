import { SqlClient } from "@effect/sql"
import { Effect } from "effect"

/**
 * A signal for the ledger's one-statement settlement. A settlement that runs outside any
 * transaction is one statement with no BEGIN or COMMIT round trip; when it finds that it
 * causes an event (the agent's 80% budget alert, the org's low-balance alert), that
 * statement calls this function, which fails it with SQLSTATE `LE001`: nothing is applied,
 * and the ledger settles again in a transaction that writes the event with the change.
 */
export default Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  yield* sql`
    CREATE FUNCTION ledger_event_due() RETURNS integer LANGUAGE plpgsql AS $$
    BEGIN
      RAISE EXCEPTION 'the settlement causes an event: settle in a transaction' USING ERRCODE = 'LE001';
    END
    $$`
})
