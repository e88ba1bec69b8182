import { SqlClient } from "@effect/sql"
import { Effect } from "effect"

/**
 * Webhook endpoints, their deliveries and the durable mail outbox. Deliveries and mails are
 * rows that workers take with `FOR UPDATE SKIP LOCKED` and a lease, so replicas share the
 * work and a restart resumes it. Secrets and mail bodies are stored encrypted.
 */
export default Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  yield* sql`
    CREATE TABLE webhook_endpoints (
      id uuid PRIMARY KEY,
      org_id uuid NOT NULL REFERENCES orgs (id),
      url text NOT NULL,
      events text[] NOT NULL DEFAULT '{}',
      secret_enc text NOT NULL,
      secret_prefix text NOT NULL,
      created_at timestamptz NOT NULL,
      deleted_at timestamptz
    )`
  yield* sql`CREATE INDEX webhook_endpoints_org ON webhook_endpoints (org_id) WHERE deleted_at IS NULL`
  yield* sql`
    CREATE TABLE webhook_deliveries (
      id uuid PRIMARY KEY,
      org_id uuid NOT NULL REFERENCES orgs (id),
      endpoint_id uuid NOT NULL REFERENCES webhook_endpoints (id),
      event_id uuid NOT NULL REFERENCES events (id),
      status text NOT NULL CHECK (status IN ('pending', 'delivered', 'failed')),
      attempts integer NOT NULL DEFAULT 0,
      next_attempt_at timestamptz,
      last_attempt_at timestamptz,
      last_status_code integer,
      last_error text,
      lease_until timestamptz,
      lease_token uuid,
      created_at timestamptz NOT NULL,
      delivered_at timestamptz,
      seq bigserial NOT NULL,
      UNIQUE (endpoint_id, event_id)
    )`
  yield* sql`CREATE INDEX webhook_deliveries_due ON webhook_deliveries (next_attempt_at) WHERE status = 'pending'`
  yield* sql`CREATE INDEX webhook_deliveries_org_seq ON webhook_deliveries (org_id, seq DESC)`
  yield* sql`
    CREATE TABLE mail_outbox (
      id uuid PRIMARY KEY,
      dedupe_key text UNIQUE,
      to_address text NOT NULL,
      message_enc text,
      status text NOT NULL CHECK (status IN ('pending', 'sent', 'failed')),
      attempts integer NOT NULL DEFAULT 0,
      next_attempt_at timestamptz,
      last_error text,
      lease_until timestamptz,
      lease_token uuid,
      created_at timestamptz NOT NULL,
      sent_at timestamptz
    )`
  yield* sql`CREATE INDEX mail_outbox_due ON mail_outbox (next_attempt_at) WHERE status = 'pending'`
})
