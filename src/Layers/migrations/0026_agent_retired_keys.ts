import { SqlClient } from "@effect/sql"
import { Effect } from "effect"

/**
 * The hashes of agent keys that were rotated or revoked, with the agent they belonged to:
 * a request still sending one is refused (401) as before, and the refusal is counted
 * against that agent, so its owner sees an agent running on an old key
 * (Http/Middleware/AgentRefusals.ts). A hash is never a key again: new keys are random.
 */
export default Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  yield* sql`
    CREATE TABLE agent_retired_keys (
      key_hash text PRIMARY KEY,
      agent_id uuid NOT NULL REFERENCES agents (id) ON DELETE CASCADE,
      org_id uuid NOT NULL REFERENCES orgs (id) ON DELETE CASCADE,
      retired_at timestamptz NOT NULL
    )`
  yield* sql`CREATE INDEX agent_retired_keys_org ON agent_retired_keys (org_id)`
})
