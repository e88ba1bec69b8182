import { SqlClient } from "@effect/sql"
import { Effect } from "effect"

/**
 * Refusals an owner can see (Services/Usage/Refusals.ts): how many times each agent was
 * refused each UTC day, by error code, with the latest one's time and message. One row per
 * (agent, day, code), added to in batches, so a refused request writes nothing itself.
 */
export default Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  yield* sql`
    CREATE TABLE agent_refusals (
      org_id uuid NOT NULL REFERENCES orgs (id) ON DELETE CASCADE,
      agent_id uuid NOT NULL REFERENCES agents (id) ON DELETE CASCADE,
      day date NOT NULL,
      code text NOT NULL,
      count bigint NOT NULL CHECK (count > 0),
      last_at timestamptz NOT NULL,
      last_message text NOT NULL,
      PRIMARY KEY (agent_id, day, code)
    )`
  yield* sql`CREATE INDEX agent_refusals_org_day ON agent_refusals (org_id, day)`
})
