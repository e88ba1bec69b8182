import { SqlClient } from "@effect/sql"
import { Effect } from "effect"

/**
 * Top-ups paid on the provider's hosted checkout page: a payment remembers that it is paid
 * through a checkout session and the session's id (the provider's payment appears only once
 * the customer pays). The development sandbox keeps its own checkout sessions, each over
 * one sandbox payment intent.
 */
export default Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  yield* sql`
    ALTER TABLE payments
      ADD COLUMN checkout boolean NOT NULL DEFAULT false,
      ADD COLUMN checkout_session_id text UNIQUE`
  yield* sql`
    CREATE TABLE sandbox_checkout_sessions (
      id text PRIMARY KEY,
      idempotency_key text UNIQUE NOT NULL,
      payment_intent_id text NOT NULL REFERENCES sandbox_payment_intents (id),
      url text NOT NULL,
      success_url text NOT NULL,
      cancel_url text NOT NULL,
      status text NOT NULL CHECK (status IN ('open', 'complete', 'expired')),
      created_at timestamptz NOT NULL
    )`
})
