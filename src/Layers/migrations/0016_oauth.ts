import { SqlClient } from "@effect/sql"
import { Effect } from "effect"

/**
 * OAuth for /mcp (Services/OAuth): the authorization server's records (codes, tokens,
 * grants, registered clients, interactions, sessions; one table, keyed by the library's
 * model name), its signing and cookie keys (sealed with SECRETS_ENCRYPTION_KEY), and the
 * connections: which agent each consented grant acts as.
 */
export default Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  yield* sql`
    CREATE TABLE oauth_records (
      model text NOT NULL,
      id text NOT NULL,
      payload jsonb NOT NULL,
      grant_id text,
      uid text,
      user_code text,
      expires_at timestamptz,
      PRIMARY KEY (model, id)
    )`
  yield* sql`CREATE INDEX oauth_records_grant ON oauth_records (grant_id) WHERE grant_id IS NOT NULL`
  yield* sql`CREATE INDEX oauth_records_uid ON oauth_records (uid) WHERE uid IS NOT NULL`
  yield* sql`CREATE INDEX oauth_records_user_code ON oauth_records (user_code) WHERE user_code IS NOT NULL`
  yield* sql`CREATE INDEX oauth_records_expiry ON oauth_records (expires_at) WHERE expires_at IS NOT NULL`
  yield* sql`
    CREATE TABLE oauth_provider_keys (
      id smallint PRIMARY KEY CHECK (id = 1),
      sealed text NOT NULL,
      created_at timestamptz NOT NULL
    )`
  yield* sql`
    CREATE TABLE oauth_connections (
      id uuid PRIMARY KEY,
      grant_id text NOT NULL UNIQUE,
      client_id text NOT NULL,
      client_name text,
      org_id uuid NOT NULL REFERENCES orgs (id),
      agent_id uuid NOT NULL REFERENCES agents (id),
      user_id uuid NOT NULL REFERENCES users (id),
      created_at timestamptz NOT NULL,
      last_used_at timestamptz,
      revoked_at timestamptz
    )`
  yield* sql`CREATE INDEX oauth_connections_agent ON oauth_connections (agent_id, created_at DESC)`
})
