import { Effect, Option } from "effect"
import type { Payment } from "../../Domain/Payment.js"
import { BillingRepo } from "./BillingRepo.js"
import {
  PaymentProvider,
  type ProviderCardSetup,
  type ProviderCheckout,
  type ProviderPayment
} from "./PaymentProvider.js"
import { PaymentStates } from "./PaymentStates.js"
import { PlanSubscriptions, type SubscriptionState } from "./PlanSubscriptions.js"
import { SavedCards } from "./SavedCards.js"

/**
 * What a checkout session says about its payment, applied to ours once. The session makes
 * the provider's payment only when the customer pays, so every path that learns about it
 * (the return to the billing page, `checkout.session.completed` / `.expired`, the expiry
 * sweep, the owner cancelling) reads the session, then its payment, and hands the payment
 * to `PaymentStates.apply` (the one exactly-once crediting path, which also serves
 * `payment_intent.*`). A session that ended unpaid ends our payment `canceled`, which
 * gives back its cap allowance. A session that saves a card (`mode: setup`, no charge) makes
 * it the org's card once it is complete, from the return or `checkout.session.completed`. A
 * plan's session (`mode: subscription`) hands its subscription to PlanSubscriptions.
 */
export interface CheckoutState {
  readonly session: ProviderCheckout
  readonly payment: ProviderPayment | null
  /** A card setup's outcome (`mode: setup`). */
  readonly setup: ProviderCardSetup | null
  /** The subscription a plan's session started (`mode: subscription`), with its first invoice. */
  readonly subscription: SubscriptionState | null
}

export class Checkouts extends Effect.Service<Checkouts>()("Billing/Checkouts", {
  effect: Effect.gen(function*() {
    const repo = yield* BillingRepo
    const provider = yield* PaymentProvider
    const states = yield* PaymentStates
    const cards = yield* SavedCards
    const subscriptions = yield* PlanSubscriptions

    const withPayment = (session: ProviderCheckout) =>
      Effect.all({
        session: Effect.succeed(session),
        payment: session.paymentId === null ? Effect.succeed(null) : provider.retrievePayment(session.paymentId),
        setup: session.setupId === null ? Effect.succeed(null) : provider.retrieveCardSetup(session.setupId),
        subscription: session.subscriptionId === null
          ? Effect.succeed(null)
          : subscriptions.read(session.subscriptionId)
      })

    /** The provider's calls, made before any transaction. */
    const read = (sessionId: string) => Effect.flatMap(provider.retrieveCheckout(sessionId), withPayment)

    /** Applies what was read (inside the webhook's transaction, or on its own). */
    const apply = ({ payment, session, setup, subscription }: CheckoutState) =>
      Effect.gen(function*() {
        if (session.mode === "setup") {
          if (session.status === "complete" && setup?.succeeded === true && session.orgId !== null) {
            yield* cards.keep(session.orgId, setup)
          }
          return Option.none<Payment>()
        }
        if (subscription !== null) {
          // A plan's session: its first invoice is our payment, its subscription the org's plan.
          yield* subscriptions.apply(subscription)
          return session.ourPaymentId === null
            ? Option.none<Payment>()
            : yield* repo.lockPaymentById(session.ourPaymentId)
        }
        const applied = payment === null ? Option.none<Payment>() : yield* states.apply(payment)
        const paid = payment !== null && (payment.status === "succeeded" || payment.status === "processing")
        if (session.status !== "expired" || paid || session.ourPaymentId === null) return applied
        return yield* states.endCheckout(session.ourPaymentId, session.id)
      })

    /** The owner came back from the hosted page (or a webhook named the session). */
    const sync = (sessionId: string) => Effect.flatMap(read(sessionId), apply)

    /** Ends an unpaid checkout at the provider (the owner cancelled, or it is too old); one paid meanwhile is credited. */
    const end = (row: Payment) =>
      row.checkout_session_id === null
        ? Effect.succeed(Option.some(row))
        : Effect.flatMap(Effect.flatMap(provider.expireCheckout(row.checkout_session_id), withPayment), apply)

    return { read, apply, sync, end } as const
  }),
  dependencies: [PaymentStates.Default, BillingRepo.Default, SavedCards.Default, PlanSubscriptions.Default]
}) {}
