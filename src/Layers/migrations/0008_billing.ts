import { SqlClient } from "@effect/sql"
import { Effect } from "effect"

/**
 * Billing: payments through the payment provider, each org's saved card, auto-reload and
 * plan period, the founding offer's seats, handled provider webhook events, USD to INR
 * rates, and the development payment sandbox's own records.
 *
 * Exactly once: a payment's credits land in the transaction that moves its row from not
 * credited to credited (`credited_at` set under the row's lock), together with the ledger
 * entry; a webhook event's id is recorded in the transaction of its effect.
 */
export default Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  // A refund or chargeback takes credits back even when they were spent, so a balance may
  // go negative; holds still take credits only from a balance that covers them.
  yield* sql`ALTER TABLE org_balances DROP CONSTRAINT IF EXISTS org_balances_balance_check`
  yield* sql`
    CREATE TABLE billing_profiles (
      org_id uuid PRIMARY KEY REFERENCES orgs (id),
      customer_id text,
      card_payment_method_id text,
      card_brand text,
      card_last4 text,
      card_exp_month integer,
      card_exp_year integer,
      auto_reload_enabled boolean NOT NULL DEFAULT false,
      auto_reload_threshold_credits bigint CHECK (auto_reload_threshold_credits >= 0),
      auto_reload_amount_credits bigint CHECK (auto_reload_amount_credits > 0),
      auto_reload_monthly_limit_credits bigint CHECK (auto_reload_monthly_limit_credits > 0),
      auto_reload_failures integer NOT NULL DEFAULT 0,
      auto_reload_next_attempt_at timestamptz,
      auto_reload_disabled_reason text,
      plan_period_end timestamptz,
      plan_founding boolean NOT NULL DEFAULT false,
      updated_at timestamptz NOT NULL
    )`
  yield* sql`
    CREATE INDEX billing_profiles_auto_reload ON billing_profiles (org_id) WHERE auto_reload_enabled`
  yield* sql`
    CREATE TABLE payments (
      id uuid PRIMARY KEY,
      org_id uuid NOT NULL REFERENCES orgs (id),
      purpose text NOT NULL CHECK (purpose IN ('top_up', 'auto_reload', 'plan')),
      provider text NOT NULL CHECK (provider IN ('stripe', 'sandbox')),
      provider_payment_id text UNIQUE,
      provider_idempotency_key text NOT NULL UNIQUE,
      status text NOT NULL CHECK (status IN ('creating', 'pending', 'succeeded', 'failed', 'canceled')),
      currency text NOT NULL CHECK (currency IN ('usd', 'inr')),
      amount_minor bigint NOT NULL CHECK (amount_minor > 0),
      usd_cents bigint NOT NULL CHECK (usd_cents > 0),
      credits bigint NOT NULL CHECK (credits >= 0),
      fx_rate text,
      fx_rate_date date,
      plan text CHECK (plan IN ('pro', 'max')),
      offer text,
      save_card boolean NOT NULL DEFAULT false,
      idempotency_key text,
      fingerprint text,
      failure_message text,
      receipt_url text,
      card_brand text,
      card_last4 text,
      refunded_minor bigint NOT NULL DEFAULT 0 CHECK (refunded_minor >= 0),
      disputed_minor bigint NOT NULL DEFAULT 0 CHECK (disputed_minor >= 0),
      reversed_credits bigint NOT NULL DEFAULT 0 CHECK (reversed_credits >= 0 AND reversed_credits <= credits),
      credited_at timestamptz,
      created_by uuid,
      created_at timestamptz NOT NULL,
      updated_at timestamptz NOT NULL
    )`
  yield* sql`CREATE UNIQUE INDEX payments_idempotency ON payments (org_id, idempotency_key) WHERE idempotency_key IS NOT NULL`
  yield* sql`CREATE INDEX payments_org ON payments (org_id, created_at DESC, id DESC)`
  yield* sql`CREATE INDEX payments_open ON payments (created_at) WHERE status IN ('creating', 'pending', 'failed')`
  // At most one auto-reload charge in flight per org: a second cannot even be written.
  yield* sql`
    CREATE UNIQUE INDEX payments_one_auto_reload ON payments (org_id)
    WHERE purpose = 'auto_reload' AND status IN ('creating', 'pending')`
  yield* sql`
    CREATE TABLE founding_offer_claims (
      org_id uuid PRIMARY KEY REFERENCES orgs (id),
      payment_id uuid NOT NULL,
      status text NOT NULL CHECK (status IN ('reserved', 'taken')),
      created_at timestamptz NOT NULL,
      taken_at timestamptz
    )`
  yield* sql`
    CREATE TABLE payment_webhook_events (
      event_id text PRIMARY KEY,
      type text NOT NULL,
      received_at timestamptz NOT NULL
    )`
  yield* sql`
    CREATE TABLE fx_rates (
      rate_date date PRIMARY KEY,
      usd_per_eur text NOT NULL,
      inr_per_eur text NOT NULL,
      fetched_at timestamptz NOT NULL
    )`
  yield* sql`CREATE INDEX fx_rates_fetched ON fx_rates (fetched_at DESC)`
  yield* sql`
    CREATE TABLE sandbox_payment_intents (
      id text PRIMARY KEY,
      idempotency_key text UNIQUE,
      client_secret text NOT NULL,
      amount_minor bigint NOT NULL,
      currency text NOT NULL,
      status text NOT NULL,
      customer_id text,
      payment_method_id text,
      card_brand text,
      card_last4 text,
      card_exp_month integer,
      card_exp_year integer,
      save_card boolean NOT NULL,
      failure_message text,
      metadata jsonb NOT NULL,
      created_at timestamptz NOT NULL
    )`
  // The sandbox is development only and moves no money: its client secrets are kept as
  // given so a repeated request can answer the same one, as Stripe does.
})
