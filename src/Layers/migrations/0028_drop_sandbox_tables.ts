import { SqlClient } from "@effect/sql"
import { Effect } from "effect"

/**
 * The tables of the payment sandbox that billing once kept itself: development without
 * Stripe keys now speaks Stripe to the Stripe emulator (packages/stripe-emulator), which keeps
 * its objects in its own memory, so nothing reads or writes these.
 */
export default Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  for (
    const table of [
      "sandbox_portal_sessions",
      "sandbox_invoices",
      "sandbox_subscriptions",
      "sandbox_prices",
      "sandbox_checkout_sessions",
      "sandbox_payment_intents"
    ]
  ) {
    yield* sql`DROP TABLE IF EXISTS ${sql(table)} CASCADE`
  }
})
