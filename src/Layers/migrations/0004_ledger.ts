import { SqlClient } from "@effect/sql"
import { Effect } from "effect"

/**
 * Money: org balances and their append-only ledger, holds, agents' monthly spend, trial
 * grants, the gateway's call log and the daily purchase limits.
 *
 * `org_balances.balance` is the org's available credits and always equals the sum of the
 * org's `ledger_entries.amount` (each entry's signed effect on it): a hold takes its amount
 * out, a release puts back what was not charged, a capture makes the held credits final
 * (amount 0, `credits` = what was charged).
 *
 * A live hold the balance refused after the budget took it is kept as a `refused` hold
 * (budget only, no credits, no entries) and released at once; it is what makes a hold one
 * statement without a transaction, and the sweeper releases it if a crash comes first.
 *
 * The high-volume append tables (entries, holds, calls) carry no foreign key to orgs or
 * agents: a key check share-locks the parent row, and every purchase of one org would
 * contend on it. Their ids come from the balance and budget rows locked in the same
 * transaction.
 */
export default Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  yield* sql`
    CREATE TABLE org_balances (
      org_id uuid PRIMARY KEY REFERENCES orgs (id),
      balance bigint NOT NULL DEFAULT 0 CHECK (balance >= 0),
      frozen boolean NOT NULL DEFAULT false,
      funded boolean NOT NULL DEFAULT false,
      low_alert_armed boolean NOT NULL DEFAULT true,
      low_alert_fired_by uuid,
      trial_window_start timestamptz,
      trial_window_spent bigint NOT NULL DEFAULT 0 CHECK (trial_window_spent >= 0),
      updated_at timestamptz NOT NULL
    )`
  yield* sql`
    CREATE TABLE ledger_holds (
      id uuid PRIMARY KEY,
      org_id uuid NOT NULL,
      agent_id uuid NOT NULL,
      amount bigint NOT NULL CHECK (amount > 0),
      purpose text NOT NULL,
      reference text NOT NULL,
      test_mode boolean NOT NULL,
      refused boolean NOT NULL DEFAULT false,
      budget_approved boolean NOT NULL DEFAULT false,
      month date NOT NULL,
      status text NOT NULL CHECK (status IN ('held', 'captured', 'released')),
      captured bigint NOT NULL DEFAULT 0 CHECK (captured >= 0 AND captured <= amount),
      refunded bigint NOT NULL DEFAULT 0 CHECK (refunded >= 0 AND refunded <= captured),
      created_at timestamptz NOT NULL,
      expires_at timestamptz NOT NULL,
      settled_at timestamptz
    )`
  yield* sql`CREATE UNIQUE INDEX ledger_holds_reference ON ledger_holds (reference) WHERE NOT refused`
  yield* sql`CREATE INDEX ledger_holds_open ON ledger_holds (expires_at) WHERE status = 'held'`
  yield* sql`CREATE INDEX ledger_holds_org ON ledger_holds (org_id, created_at DESC)`
  yield* sql`
    CREATE TABLE ledger_entries (
      id uuid PRIMARY KEY,
      seq bigserial NOT NULL,
      org_id uuid NOT NULL,
      kind text NOT NULL CHECK (kind IN (
        'trial_grant', 'top_up', 'hold', 'capture', 'release', 'refund', 'adjustment', 'trial_expiry'
      )),
      amount bigint NOT NULL,
      credits bigint NOT NULL CHECK (credits >= 0),
      hold_id uuid REFERENCES ledger_holds (id),
      agent_id uuid,
      note text,
      created_at timestamptz NOT NULL
    )`
  yield* sql`CREATE INDEX ledger_entries_org_seq ON ledger_entries (org_id, seq DESC)`
  yield* sql`CREATE INDEX ledger_entries_hold ON ledger_entries (hold_id) WHERE hold_id IS NOT NULL`
  yield* sql`
    CREATE TABLE agent_month_spend (
      agent_id uuid NOT NULL REFERENCES agents (id),
      month date NOT NULL,
      org_id uuid NOT NULL,
      spent bigint NOT NULL DEFAULT 0 CHECK (spent >= 0),
      held bigint NOT NULL DEFAULT 0 CHECK (held >= 0),
      alerted_80pct boolean NOT NULL DEFAULT false,
      PRIMARY KEY (agent_id, month)
    )`
  yield* sql`
    CREATE TABLE trial_grants (
      id uuid PRIMARY KEY,
      org_id uuid NOT NULL UNIQUE REFERENCES orgs (id),
      credits bigint NOT NULL CHECK (credits > 0),
      granted_at timestamptz NOT NULL,
      expires_at timestamptz NOT NULL,
      expiring_notified_at timestamptz,
      expired_at timestamptz,
      expired_credits bigint
    )`
  yield* sql`CREATE INDEX trial_grants_open ON trial_grants (expires_at) WHERE expired_at IS NULL`
  yield* sql`
    CREATE TABLE provider_daily_calls (
      org_id uuid NOT NULL,
      provider_id text NOT NULL,
      day date NOT NULL,
      calls integer NOT NULL CHECK (calls >= 0),
      PRIMARY KEY (org_id, provider_id, day)
    )`
  yield* sql`
    CREATE TABLE people_lookups_daily (
      org_id uuid NOT NULL,
      domain text NOT NULL,
      day date NOT NULL,
      lookups integer NOT NULL CHECK (lookups >= 0),
      PRIMARY KEY (org_id, domain, day)
    )`
  yield* sql`
    CREATE TABLE gateway_calls (
      id uuid PRIMARY KEY,
      org_id uuid NOT NULL,
      agent_id uuid NOT NULL,
      endpoint_id text NOT NULL,
      provider_id text NOT NULL,
      mode text NOT NULL CHECK (mode IN ('test', 'live')),
      status text NOT NULL,
      price_credits bigint NOT NULL,
      charged_credits bigint NOT NULL DEFAULT 0,
      refunded_credits bigint NOT NULL DEFAULT 0,
      refund_reason text,
      provider_status integer,
      latency_ms integer,
      hold_id uuid,
      created_at timestamptz NOT NULL,
      finished_at timestamptz
    )`
  yield* sql`CREATE INDEX gateway_calls_org ON gateway_calls (org_id, created_at DESC, id DESC)`
  yield* sql`CREATE INDEX gateway_calls_pending ON gateway_calls (created_at) WHERE status = 'pending'`
})
