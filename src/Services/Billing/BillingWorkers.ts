import { Clock, Duration, Effect, Layer } from "effect"
import { roundEnded } from "../Background/WorkerRounds.js"
import { runEvery } from "../Ledger/LedgerMaintenance.js"
import { AutoReload, AutoReloadSignal } from "./AutoReload.js"
import { BillingConfig } from "./BillingConfig.js"
import { BillingRepo } from "./BillingRepo.js"
import { Checkouts } from "./Checkouts.js"
import { Fx } from "./Fx.js"
import { PaymentProvider } from "./PaymentProvider.js"
import { PaymentStates } from "./PaymentStates.js"
import { PlanPrices } from "./PlanPrices.js"

/** The least time between two auto-reload rounds. */
const AUTO_RELOAD_ROUND_GAP = Duration.millis(100)

/**
 * Billing's background duties, scoped to the server and safe on every replica:
 * - USD/INR rates fetched at start and every FX_REFRESH_INTERVAL_MS (with Stripe);
 * - auto-reload, woken by `AutoReloadSignal` or every BILLING_WORKER_INTERVAL_MS;
 * - payments not paid within PAYMENT_EXPIRY_MS are cancelled at the provider (or, if they
 *   were paid after all, credited), giving back their cap allowance and offer seat (a
 *   checkout's session is expired at the provider); rows a
 *   crash left `creating` are taken up again with the same provider idempotency key;
 * - the plans' prices found or made at the provider (by lookup key).
 */
export const BillingWorkersLive = Layer.scopedDiscard(Effect.gen(function*() {
  const config = yield* BillingConfig
  const provider = yield* PaymentProvider
  if (provider.kind === "off") return
  const fx = yield* Fx
  const autoReload = yield* AutoReload
  const signal = yield* AutoReloadSignal
  const repo = yield* BillingRepo
  const states = yield* PaymentStates
  const checkouts = yield* Checkouts
  const prices = yield* PlanPrices

  // The plans' prices are found (or made) on start; one that fails is tried again when needed.
  yield* prices.all.pipe(
    Effect.catchAll((error) => Effect.logWarning("The plans' prices could not be found or made yet", error)),
    Effect.forkScoped
  )

  // With Stripe the rate is kept fresh; the sandbox fetches it only when an INR top-up needs it.
  if (provider.kind === "stripe") yield* runEvery("USD/INR rates", Duration.millis(config.fxRefreshMs), fx.refresh)

  const autoReloadRounds = Effect.gen(function*() {
    yield* Effect.raceFirst(signal.next, Effect.sleep(Duration.millis(config.workerIntervalMs)))
    yield* autoReload.runOnce.pipe(
      Effect.catchAllCause((cause) => Effect.logWarning("Auto-reload round failed", cause))
    )
    yield* roundEnded("auto-reload")
    // Every gateway settlement wakes the worker: under load the wakes of the next 100 ms
    // make one round, not one query per call.
    yield* Effect.sleep(AUTO_RELOAD_ROUND_GAP)
  }).pipe(Effect.forever, Effect.forkScoped)
  yield* autoReloadRounds

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
  yield* runEvery("billing sweep", Duration.millis(config.workerIntervalMs), sweepOpenPayments)
}))
