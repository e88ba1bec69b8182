import { Effect, Layer } from "effect"
import { NotConfigured } from "../../Errors/ApiErrors.js"
import { Ledger } from "../Ledger/Ledger.js"
import { LedgerLive } from "../Ledger/LedgerLive.js"
import { AutoReload, AutoReloadSignal } from "./AutoReload.js"
import { BillingConfig } from "./BillingConfig.js"
import { BillingMail } from "./BillingMail.js"
import { BillingPortal } from "./BillingPortal.js"
import { BillingRepo } from "./BillingRepo.js"
import { CardSetups } from "./CardSetups.js"
import { Checkouts } from "./Checkouts.js"
import { Fx } from "./Fx.js"
import { PaymentProvider } from "./PaymentProvider.js"
import { PaymentReturns } from "./PaymentReturns.js"
import { Payments } from "./Payments.js"
import { PaymentStates } from "./PaymentStates.js"
import { PaymentSweep } from "./PaymentSweep.js"
import { PaymentWebhooks } from "./PaymentWebhooks.js"
import { PlanChanges } from "./PlanChanges.js"
import { PlanPrices } from "./PlanPrices.js"
import { PlanSubscriptions } from "./PlanSubscriptions.js"
import { SavedCards } from "./SavedCards.js"
import { StripeEmulator, StripeEmulatorLive } from "./StripeEmulator.js"
import { StripeProvider } from "./StripeProvider.js"
import { Summary } from "./Summary.js"
import { TopUps } from "./TopUps.js"

/** Production without Stripe keys: billing is off and says so. */
const notConfigured = Effect.fail(
  new NotConfigured({
    message: "Billing is not configured: set STRIPE_SECRET_KEY, STRIPE_PUBLISHABLE_KEY and STRIPE_WEBHOOK_SECRET"
  })
)
const OffProvider = Layer.succeed(
  PaymentProvider,
  PaymentProvider.of({
    kind: "off",
    publishableKey: null,
    createCustomer: () => notConfigured,
    createPayment: () => notConfigured,
    createCheckout: () => notConfigured,
    retrieveCheckout: () => notConfigured,
    expireCheckout: () => notConfigured,
    createCardSetup: () => notConfigured,
    retrieveCardSetup: () => notConfigured,
    chargeOffSession: () => notConfigured,
    retrievePayment: () => notConfigured,
    cancelPayment: () => notConfigured,
    planPrice: () => notConfigured,
    retrieveSubscription: () => notConfigured,
    changeSubscriptionPrice: () => notConfigured,
    cancelSubscription: () => notConfigured,
    retrieveInvoice: () => notConfigured,
    createPortal: () => notConfigured,
    retrieveDefaultCard: () => notConfigured,
    verifyWebhook: () => notConfigured
  })
)

/**
 * Stripe with keys; in development without them the same provider against the Stripe
 * emulator on loopback (the payment sandbox); off in production without them.
 */
export const PaymentProviderLive = Layer.unwrapEffect(Effect.map(BillingConfig, (config) => {
  switch (config.mode._tag) {
    case "stripe":
      return Layer.merge(StripeProvider(config.mode.stripe, config.providerTimeoutMs), StripeEmulator.none)
    case "sandbox":
      return StripeEmulatorLive(config.providerTimeoutMs, config.workerIntervalMs)
    case "off":
      return Layer.merge(OffProvider, StripeEmulator.none)
  }
})).pipe(Layer.provide(BillingConfig.Default))

/**
 * The ledger as the gateway uses it, waking the auto-reload worker after each settlement:
 * an in-memory signal, no statement added to the settlement.
 */
export const LedgerWakingAutoReload = Layer.effect(
  Ledger,
  Effect.gen(function*() {
    const ledger = yield* Ledger
    const signal = yield* AutoReloadSignal
    return Ledger.of({
      ...ledger,
      capture: (holdId, amount) => Effect.tap(ledger.capture(holdId, amount), () => signal.wake),
      settleTogether: (settlements) => Effect.tap(ledger.settleTogether(settlements), () => signal.wake)
    })
  })
).pipe(Layer.provide(LedgerLive), Layer.provide(AutoReloadSignal.Default))

/** Every billing service, for the server's Services list (the workers are BillingWorkersLive). */
export const BillingLive = Layer.mergeAll(
  BillingConfig.Default,
  BillingRepo.Default,
  BillingMail.Default,
  Fx.Default,
  PaymentReturns.Default,
  PaymentStates.Default,
  Checkouts.Default,
  CardSetups.Default,
  Payments.Default,
  TopUps.Default,
  AutoReload.Default,
  PlanPrices.Default,
  SavedCards.Default,
  PlanSubscriptions.Default,
  PlanChanges.Default,
  BillingPortal.Default,
  Summary.Default,
  PaymentWebhooks.Default,
  PaymentSweep.Default
).pipe(
  Layer.provideMerge(PaymentProviderLive),
  Layer.provideMerge(AutoReloadSignal.Default),
  Layer.provide(LedgerLive)
)
