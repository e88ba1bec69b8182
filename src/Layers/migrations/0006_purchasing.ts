import { SqlClient } from "@effect/sql"
import { Effect } from "effect"

/**
 * Purchasing: daily recommend quotas, owner approvals (and their one-click mail links),
 * receipts with one row per item, jobs taken by workers, idempotency keys and disputes.
 *
 * A receipt is written when a purchase starts: every item is held through the ledger in
 * the same transaction, then settled on its own (captured when its result passes the
 * check, released otherwise) in the transaction that records its outcome. A receipt's
 * charged and refunded totals are sums over its items, never a second copy. High-volume
 * rows (receipts, items, keys) carry no foreign key to orgs or agents, for the reason
 * given in 0004.
 */
export default Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  yield* sql`
    CREATE TABLE recommend_usage (
      org_id uuid NOT NULL,
      day date NOT NULL,
      score_lookups integer NOT NULL DEFAULT 0 CHECK (score_lookups >= 0),
      free_text_lookups integer NOT NULL DEFAULT 0 CHECK (free_text_lookups >= 0),
      PRIMARY KEY (org_id, day)
    )`
  yield* sql`
    CREATE TABLE purchase_approvals (
      id uuid PRIMARY KEY,
      org_id uuid NOT NULL REFERENCES orgs (id),
      agent_id uuid NOT NULL REFERENCES agents (id),
      tool_id uuid NOT NULL REFERENCES tools (id),
      inputs_hash text NOT NULL,
      item_count integer NOT NULL CHECK (item_count > 0),
      amount_credits bigint NOT NULL CHECK (amount_credits > 0),
      reason text NOT NULL CHECK (reason IN ('over_threshold', 'over_budget')),
      status text NOT NULL CHECK (status IN ('waiting', 'approved', 'rejected')),
      note text,
      decided_by uuid REFERENCES users (id),
      decided_by_email text,
      decided_via text CHECK (decided_via IN ('session', 'org_key', 'email_link')),
      created_at timestamptz NOT NULL,
      expires_at timestamptz NOT NULL,
      decided_at timestamptz,
      receipt_id uuid,
      used_at timestamptz
    )`
  yield* sql`CREATE INDEX purchase_approvals_org ON purchase_approvals (org_id, created_at DESC, id DESC)`
  yield* sql`
    CREATE INDEX purchase_approvals_waiting ON purchase_approvals (agent_id, tool_id, inputs_hash, amount_credits)
    WHERE status = 'waiting'`
  yield* sql`
    CREATE TABLE approval_links (
      token_hash text PRIMARY KEY,
      approval_id uuid NOT NULL REFERENCES purchase_approvals (id),
      user_id uuid NOT NULL REFERENCES users (id),
      decision text NOT NULL CHECK (decision IN ('approve', 'reject')),
      expires_at timestamptz NOT NULL,
      used_at timestamptz
    )`
  yield* sql`CREATE INDEX approval_links_approval ON approval_links (approval_id)`
  yield* sql`
    CREATE TABLE receipts (
      id uuid PRIMARY KEY,
      org_id uuid NOT NULL,
      agent_id uuid NOT NULL,
      mode text NOT NULL CHECK (mode IN ('test', 'live')),
      tool_id uuid NOT NULL,
      task_type text NOT NULL,
      price_credits bigint NOT NULL CHECK (price_credits > 0),
      item_count integer NOT NULL CHECK (item_count BETWEEN 1 AND 1000),
      held_credits bigint NOT NULL CHECK (held_credits >= 0),
      fallback boolean NOT NULL,
      status text NOT NULL CHECK (status IN ('running', 'done')),
      job_id uuid,
      approval_id uuid,
      idempotency_key text,
      created_at timestamptz NOT NULL,
      completed_at timestamptz
    )`
  yield* sql`CREATE INDEX receipts_org ON receipts (org_id, created_at DESC, id DESC)`
  yield* sql`CREATE INDEX receipts_running ON receipts (created_at) WHERE status = 'running' AND job_id IS NULL`
  yield* sql`
    CREATE TABLE receipt_items (
      id uuid PRIMARY KEY,
      receipt_id uuid NOT NULL REFERENCES receipts (id),
      idx integer NOT NULL CHECK (idx >= 0),
      input jsonb NOT NULL,
      status text NOT NULL CHECK (status IN ('pending', 'running', 'passed', 'partial', 'failed', 'expired')),
      hold_id uuid,
      tool_id uuid,
      provider text,
      fallback_from uuid,
      cost_credits bigint NOT NULL DEFAULT 0 CHECK (cost_credits >= 0),
      result jsonb,
      result_hash text,
      check_id text,
      check_version text,
      reason text,
      error_code text,
      refunded_credits bigint NOT NULL DEFAULT 0 CHECK (refunded_credits >= 0),
      runs integer NOT NULL DEFAULT 0,
      claimed_by text,
      claimed_until timestamptz,
      started_at timestamptz,
      finished_at timestamptz,
      UNIQUE (receipt_id, idx)
    )`
  yield* sql`CREATE INDEX receipt_items_open ON receipt_items (receipt_id, idx) WHERE status IN ('pending', 'running')`
  yield* sql`
    CREATE TABLE purchase_jobs (
      id uuid PRIMARY KEY,
      receipt_id uuid NOT NULL UNIQUE REFERENCES receipts (id),
      org_id uuid NOT NULL,
      agent_id uuid NOT NULL,
      status text NOT NULL CHECK (status IN ('queued', 'running', 'done')),
      deadline_at timestamptz NOT NULL,
      lease_owner text,
      lease_until timestamptz,
      created_at timestamptz NOT NULL,
      started_at timestamptz,
      completed_at timestamptz
    )`
  yield* sql`CREATE INDEX purchase_jobs_open ON purchase_jobs (created_at) WHERE status <> 'done'`
  yield* sql`
    CREATE TABLE idempotency_keys (
      agent_id uuid NOT NULL,
      key text NOT NULL,
      fingerprint text NOT NULL,
      status text NOT NULL CHECK (status IN ('in_progress', 'done')),
      response_status integer,
      response_body text,
      receipt_id uuid NOT NULL,
      created_at timestamptz NOT NULL,
      expires_at timestamptz NOT NULL,
      PRIMARY KEY (agent_id, key)
    )`
  yield* sql`CREATE INDEX idempotency_keys_expiry ON idempotency_keys (expires_at)`
  yield* sql`
    CREATE TABLE disputes (
      id uuid PRIMARY KEY,
      org_id uuid NOT NULL REFERENCES orgs (id),
      agent_id uuid NOT NULL REFERENCES agents (id),
      receipt_id uuid NOT NULL REFERENCES receipts (id),
      item_id uuid NOT NULL UNIQUE REFERENCES receipt_items (id),
      item_index integer NOT NULL,
      reason text,
      status text NOT NULL CHECK (status IN ('open', 'upheld', 'rejected')),
      note text,
      refunded_credits bigint NOT NULL DEFAULT 0 CHECK (refunded_credits >= 0),
      decided_by text,
      created_at timestamptz NOT NULL,
      decided_at timestamptz
    )`
  yield* sql`CREATE INDEX disputes_org_open ON disputes (org_id) WHERE status = 'open'`
  yield* sql`CREATE INDEX disputes_status ON disputes (status, created_at)`
})
