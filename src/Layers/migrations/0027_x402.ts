import { SqlClient } from "@effect/sql"
import { Effect } from "effect"

/**
 * x402: payments made per request by callers without a key (Services/X402). A payer has no
 * org, so its calls and purchases are kept here and nowhere in the ledger: one row per
 * payment, from the verified authorisation to its settlement (or to nothing settled).
 *
 * - `status`: `running` (verified; the provider or the tool is working), `due` (the outcome
 *   is recorded, `due_units` to settle), `settled`, `nothing_due` (a failed call or a
 *   purchase with no item passed: nothing settled), `abandoned` (the sweeper's rule: cut
 *   off before its outcome, or its authorisation expired before it could be settled),
 *   `refused` (the facilitator refused the settlement).
 * - `(payer, payment_identifier)` is the x402 `payment-identifier` extension: the
 *   idempotency key, with `fingerprint` the request and payment it first came with.
 * - `authorization_sha256` makes each signed authorisation usable once.
 * - `lease_until`: who settles it; the sweeper takes rows whose lease lapsed.
 */
export default Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  yield* sql`
    CREATE TABLE x402_payments (
      id uuid PRIMARY KEY,
      kind text NOT NULL CHECK (kind IN ('call', 'purchase')),
      payer text NOT NULL,
      payment_identifier text,
      fingerprint text NOT NULL,
      authorization_sha256 text NOT NULL UNIQUE,
      scheme text NOT NULL,
      network text NOT NULL,
      asset text NOT NULL,
      pay_to text NOT NULL,
      subject text NOT NULL,
      price_credits bigint NOT NULL CHECK (price_credits >= 0),
      authorized_units bigint NOT NULL CHECK (authorized_units > 0),
      due_units bigint CHECK (due_units >= 0 AND due_units <= authorized_units),
      settled_units bigint CHECK (settled_units >= 0),
      status text NOT NULL
        CHECK (status IN ('running', 'due', 'settled', 'nothing_due', 'abandoned', 'refused')),
      payment_payload jsonb NOT NULL,
      requirements jsonb NOT NULL,
      valid_until timestamptz NOT NULL,
      answer jsonb,
      settlement jsonb,
      transaction text,
      failure text,
      created_at timestamptz NOT NULL,
      outcome_at timestamptz,
      finished_at timestamptz,
      lease_until timestamptz NOT NULL
    )`
  yield* sql`
    CREATE UNIQUE INDEX x402_payments_identifier ON x402_payments (payer, payment_identifier)
      WHERE payment_identifier IS NOT NULL`
  yield* sql`CREATE INDEX x402_payments_open ON x402_payments (lease_until) WHERE status IN ('running', 'due')`
  yield* sql`CREATE INDEX x402_payments_payer ON x402_payments (payer, created_at)`
  yield* sql`CREATE INDEX x402_payments_created ON x402_payments (created_at)`
})
