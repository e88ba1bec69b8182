import { SqlClient } from "@effect/sql"
import { Effect } from "effect"

/**
 * Operating the marketplace: the administrators' audit log (append-only: a trigger refuses
 * UPDATE and DELETE), tool pauses and scheduled prices, measured benchmark runs, per-org
 * openings of on-request endpoints and the owners' requests for them, runtime settings (the
 * gateway switch), and carried-out data-deletion requests.
 */
export default Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  yield* sql`
    CREATE TABLE admin_audit (
      id uuid PRIMARY KEY,
      admin_id uuid NOT NULL REFERENCES admins (id),
      admin_email text NOT NULL,
      action text NOT NULL,
      target_type text NOT NULL,
      target_id text NOT NULL,
      reason text,
      before jsonb,
      after jsonb,
      created_at timestamptz NOT NULL
    )`
  yield* sql`CREATE INDEX admin_audit_time ON admin_audit (created_at DESC, id DESC)`
  yield* sql`CREATE INDEX admin_audit_target ON admin_audit (target_type, target_id, created_at DESC)`
  yield* sql`
    CREATE FUNCTION admin_audit_append_only() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
      RAISE EXCEPTION 'admin_audit is append-only';
    END
    $$`
  yield* sql`
    CREATE TRIGGER admin_audit_append_only BEFORE UPDATE OR DELETE ON admin_audit
    FOR EACH ROW EXECUTE FUNCTION admin_audit_append_only()`

  // A pause keeps its reason; a price change waits for its moment in next_price_*.
  yield* sql`ALTER TABLE tools ADD COLUMN paused_reason text`
  yield* sql`ALTER TABLE tools ADD COLUMN next_price_credits bigint CHECK (next_price_credits > 0)`
  yield* sql`ALTER TABLE tools ADD COLUMN next_price_from timestamptz`
  yield* sql`ALTER TABLE tools ADD COLUMN adapter_ok boolean`
  yield* sql`ALTER TABLE tools ADD COLUMN adapter_checked_at timestamptz`
  yield* sql`ALTER TABLE tools ADD COLUMN adapter_problem text`

  yield* sql`
    CREATE TABLE benchmark_runs (
      id uuid PRIMARY KEY,
      tool_id uuid NOT NULL REFERENCES tools (id),
      sample_set text NOT NULL,
      started_by text NOT NULL,
      status text NOT NULL CHECK (status IN ('queued', 'running', 'done', 'failed')),
      total integer NOT NULL CHECK (total > 0),
      done integer NOT NULL DEFAULT 0,
      answered integer NOT NULL DEFAULT 0,
      correct integer NOT NULL DEFAULT 0,
      latencies_ms integer[] NOT NULL DEFAULT '{}',
      cost_credits bigint NOT NULL DEFAULT 0,
      check_version text NOT NULL,
      failure text,
      created_at timestamptz NOT NULL,
      started_at timestamptz,
      finished_at timestamptz,
      claimed_by text,
      lease_until timestamptz
    )`
  yield* sql`CREATE INDEX benchmark_runs_tool ON benchmark_runs (tool_id, created_at DESC)`
  yield* sql`CREATE INDEX benchmark_runs_open ON benchmark_runs (created_at) WHERE status IN ('queued', 'running')`
  // One run in flight per tool.
  yield* sql`CREATE UNIQUE INDEX benchmark_runs_one_open ON benchmark_runs (tool_id) WHERE status IN ('queued', 'running')`
  // Measured reports name their run and the check version; seeded ones have neither.
  yield* sql`ALTER TABLE tool_benchmarks ADD COLUMN measured_at timestamptz`
  yield* sql`ALTER TABLE tool_benchmarks ADD COLUMN run_id uuid REFERENCES benchmark_runs (id)`
  yield* sql`ALTER TABLE tool_benchmarks ADD COLUMN check_version text`
  yield* sql`ALTER TABLE tool_benchmarks ADD COLUMN cost_credits bigint`

  yield* sql`
    CREATE TABLE endpoint_openings (
      org_id uuid NOT NULL REFERENCES orgs (id),
      endpoint_id text NOT NULL REFERENCES catalogue_endpoints (id),
      opened_at timestamptz NOT NULL,
      PRIMARY KEY (org_id, endpoint_id)
    )`
  yield* sql`
    CREATE TABLE endpoint_opening_requests (
      id uuid PRIMARY KEY,
      org_id uuid NOT NULL REFERENCES orgs (id),
      endpoint_id text NOT NULL REFERENCES catalogue_endpoints (id),
      requested_by uuid REFERENCES users (id),
      note text,
      status text NOT NULL CHECK (status IN ('pending', 'opened', 'declined')),
      created_at timestamptz NOT NULL,
      decided_at timestamptz
    )`
  yield* sql`
    CREATE UNIQUE INDEX endpoint_opening_requests_pending ON endpoint_opening_requests (org_id, endpoint_id)
    WHERE status = 'pending'`
  yield* sql`CREATE INDEX endpoint_opening_requests_queue ON endpoint_opening_requests (status, created_at)`

  yield* sql`
    CREATE TABLE runtime_settings (
      name text PRIMARY KEY,
      value jsonb NOT NULL,
      updated_at timestamptz NOT NULL
    )`

  yield* sql`ALTER TABLE deletion_requests ADD COLUMN completed_at timestamptz`
  yield* sql`ALTER TABLE deletion_requests ADD COLUMN summary jsonb`
  yield* sql`ALTER TABLE orgs ADD COLUMN closed_at timestamptz`
  // The mail telling an owner their org's data was erased forgets its recipient once sent.
  yield* sql`ALTER TABLE mail_outbox ADD COLUMN forget_recipient boolean NOT NULL DEFAULT false`
})
