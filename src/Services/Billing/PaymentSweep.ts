import { Clock, Effect } from "effect"
import { AutoReload } from "./AutoReload.js"
import { BillingConfig } from "./BillingConfig.js"
import { BillingRepo } from "./BillingRepo.js"
import { Checkouts } from "./Checkouts.js"
import { PaymentProvider } from "./PaymentProvider.js"
import { PaymentStates } from "./PaymentStates.js"

/**
 * The billing sweep's one round (BillingWorkers.ts runs it every BILLING_WORKER_INTERVAL_MS):
 * payments not paid within PAYMENT_EXPIRY_MS are cancelled at the provider (or, if they were
 * paid after all, credited), giving back their cap allowance and offer seat; a checkout's
 * session is expired at the provider, or credited when the session says it was paid; rows
 * a crash left `creating` are taken up again with the same provider idempotency key.
 */
export class PaymentSweep extends Effect.Service<PaymentSweep>()("Billing/PaymentSweep", {
  effect: Effect.gen(function*() {
    const config = yield* BillingConfig
    const provider = yield* PaymentProvider
    const autoReload = yield* AutoReload
    const repo = yield* BillingRepo
    const states = yield* PaymentStates
    const checkouts = yield* Checkouts

    const sweepOpenPayments = Effect.gen(function*() {
      const now = yield* Clock.currentTimeMillis
      // A `creating` row older than a provider call can take was cut off by a crash.
      for (const row of yield* repo.openPaymentsBefore(new Date(now - (config.providerTimeoutMs + 5_000)), 100)) {
        if (row.checkout && row.checkout_session_id !== null) {
          // A checkout may have made a payment we have not heard of: the session says.
          if (row.created_at.getTime() < now - config.paymentExpiryMs) {
            yield* checkouts.end(row).pipe(Effect.catchAll(() => Effect.void))
          }
        } else if (row.provider_payment_id === null) {
          if (row.purpose === "auto_reload") yield* autoReload.resume(row)
          // A customer's payment never reached its client: nothing can have been paid.
          else yield* repo.deletePayment(row.id).pipe(Effect.orDie)
        } else if (row.created_at.getTime() < now - config.paymentExpiryMs) {
          const outcome = yield* provider.cancelPayment(row.provider_payment_id).pipe(Effect.either)
          if (outcome._tag === "Right") yield* states.apply(outcome.right)
        }
      }
    })

    return { sweepOpenPayments } as const
  }),
  dependencies: [
    AutoReload.Default,
    BillingConfig.Default,
    BillingRepo.Default,
    Checkouts.Default,
    PaymentStates.Default
  ]
}) {}
