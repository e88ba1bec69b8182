import { Duration, Effect, Layer } from "effect"
import { roundEnded } from "../Background/WorkerRounds.js"
import { runEvery } from "../Ledger/LedgerMaintenance.js"
import { AutoReload, AutoReloadSignal } from "./AutoReload.js"
import { BillingConfig } from "./BillingConfig.js"
import { Fx } from "./Fx.js"
import { PaymentProvider } from "./PaymentProvider.js"
import { PaymentSweep } from "./PaymentSweep.js"
import { PlanPrices } from "./PlanPrices.js"

/** The least time between two auto-reload rounds. */
const AUTO_RELOAD_ROUND_GAP = Duration.millis(100)

/**
 * Billing's background duties, scoped to the server and safe on every replica:
 * - USD/INR rates fetched at start and every FX_REFRESH_INTERVAL_MS (with Stripe);
 * - auto-reload, woken by `AutoReloadSignal` or every BILLING_WORKER_INTERVAL_MS;
 * - the billing sweep (PaymentSweep.ts): payments not paid within PAYMENT_EXPIRY_MS ended,
 *   rows a crash left `creating` taken up again;
 * - the plans' prices found or made at the provider (by lookup key).
 */
export const BillingWorkersLive = Layer.scopedDiscard(Effect.gen(function*() {
  const config = yield* BillingConfig
  const provider = yield* PaymentProvider
  if (provider.kind === "off") return
  const fx = yield* Fx
  const autoReload = yield* AutoReload
  const signal = yield* AutoReloadSignal
  const sweep = yield* PaymentSweep
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

  yield* runEvery("billing sweep", Duration.millis(config.workerIntervalMs), sweep.sweepOpenPayments)
}))
