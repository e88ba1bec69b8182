import { SqlClient } from "@effect/sql"
import { Effect } from "effect"

/**
 * Top-ups paid on the provider's hosted checkout page: a payment remembers that it is paid
 * through a checkout session and the session's id (the provider's payment appears only once
 * the customer pays). The development sandbox keeps its own checkout sessions, each over
 * one sandbox payment intent (buying credits) or saving a card (`setup`).
 */
export default Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  yield* sql`
    ALTER TABLE payments
      ADD COLUMN checkout boolean NOT NULL DEFAULT false,
      ADD COLUMN checkout_session_id text UNIQUE`
  // The card setup the owner was last sent to (saving a card on the hosted page).
  yield* sql`ALTER TABLE billing_profiles ADD COLUMN card_setup_session_id text`
  yield* sql`
    CREATE TABLE sandbox_checkout_sessions (
      id text PRIMARY KEY,
      idempotency_key text UNIQUE NOT NULL,
      mode text NOT NULL CHECK (mode IN ('payment', 'setup')),
      payment_intent_id text REFERENCES sandbox_payment_intents (id),
      org_id text,
      customer_id text,
      payment_method_id text,
      card_brand text,
      card_last4 text,
      failure_message text,
      url text NOT NULL,
      success_url text NOT NULL,
      cancel_url text NOT NULL,
      status text NOT NULL CHECK (status IN ('open', 'complete', 'expired')),
      created_at timestamptz NOT NULL
    )`
})
