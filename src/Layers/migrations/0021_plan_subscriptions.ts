import { SqlClient } from "@effect/sql"
import { Effect } from "effect"

/**
 * Plans as the payment provider's subscriptions: an org's billing profile names the
 * subscription its plan follows (the provider renews it, retries failed renewals and ends
 * it). The development sandbox keeps its own prices, subscriptions, invoices and portal
 * sessions, so the same flow runs without a Stripe account; its checkout sessions may now
 * start a subscription.
 */
export default Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  yield* sql`ALTER TABLE billing_profiles ADD COLUMN subscription_id text`
  yield* sql`
    ALTER TABLE sandbox_checkout_sessions
      DROP CONSTRAINT sandbox_checkout_sessions_mode_check,
      ADD CONSTRAINT sandbox_checkout_sessions_mode_check CHECK (mode IN ('payment', 'setup', 'subscription')),
      ADD COLUMN price_id text,
      ADD COLUMN our_payment_id text,
      ADD COLUMN subscription_id text`
  yield* sql`
    CREATE TABLE sandbox_prices (
      id text PRIMARY KEY,
      lookup_key text UNIQUE NOT NULL,
      product_name text NOT NULL,
      amount_minor bigint NOT NULL CHECK (amount_minor > 0)
    )`
  yield* sql`
    CREATE TABLE sandbox_subscriptions (
      id text PRIMARY KEY,
      customer_id text NOT NULL,
      org_id text,
      our_payment_id text,
      price_id text NOT NULL REFERENCES sandbox_prices (id),
      payment_method_id text NOT NULL,
      card_brand text NOT NULL,
      card_last4 text NOT NULL,
      status text NOT NULL CHECK (status IN ('active', 'past_due', 'unpaid', 'canceled')),
      ended_because text,
      current_period_end timestamptz NOT NULL,
      created_at timestamptz NOT NULL
    )`
  yield* sql`CREATE INDEX sandbox_subscriptions_due ON sandbox_subscriptions (current_period_end) WHERE status = 'active'`
  yield* sql`
    CREATE TABLE sandbox_invoices (
      id text PRIMARY KEY,
      subscription_id text NOT NULL REFERENCES sandbox_subscriptions (id),
      billing_reason text NOT NULL,
      amount_minor bigint NOT NULL,
      status text NOT NULL CHECK (status IN ('open', 'paid')),
      failure_message text,
      created_at timestamptz NOT NULL
    )`
  yield* sql`
    CREATE TABLE sandbox_portal_sessions (
      id text PRIMARY KEY,
      customer_id text NOT NULL,
      return_url text NOT NULL,
      created_at timestamptz NOT NULL
    )`
})
