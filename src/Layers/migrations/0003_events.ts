import { SqlClient } from "@effect/sql"
import { Effect } from "effect"

/** The event store: every event, written in the transaction of the change that caused it. */
export default Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  yield* sql`
    CREATE TABLE events (
      id uuid PRIMARY KEY,
      org_id uuid NOT NULL REFERENCES orgs (id),
      type text NOT NULL,
      data jsonb NOT NULL,
      created_at timestamptz NOT NULL,
      seq bigserial NOT NULL
    )`
  yield* sql`CREATE INDEX events_org_seq ON events (org_id, seq DESC)`
  yield* sql`CREATE INDEX events_org_type_seq ON events (org_id, type, seq DESC)`
})
