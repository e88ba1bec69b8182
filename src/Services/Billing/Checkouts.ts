import { SqlClient } from "@effect/sql"
import { Clock, Effect, Option } from "effect"
import { BillingRepo, type PaymentRow } from "./BillingRepo.js"
import {
  PaymentProvider,
  type ProviderCardSetup,
  type ProviderCheckout,
  type ProviderPayment
} from "./PaymentProvider.js"
import { PaymentStates } from "./PaymentStates.js"

/**
 * What a checkout session says about its payment, applied to ours once. The session makes
 * the provider's payment only when the customer pays, so every path that learns about it
 * (the return to the billing page, `checkout.session.completed` / `.expired`, the expiry
 * sweep, the owner cancelling) reads the session, then its payment, and hands the payment
 * to `PaymentStates.apply` (the one exactly-once crediting path, which also serves
 * `payment_intent.*`). A session that ended unpaid ends our payment `canceled`, which
 * gives back its cap allowance. A session that saves a card (`mode: setup`, no charge) makes
 * it the org's card once it is complete, from the return or `checkout.session.completed`.
 */
export interface CheckoutState {
  readonly session: ProviderCheckout
  readonly payment: ProviderPayment | null
  /** A card setup's outcome (`mode: setup`). */
  readonly setup: ProviderCardSetup | null
}

export class Checkouts extends Effect.Service<Checkouts>()("Billing/Checkouts", {
  effect: Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const repo = yield* BillingRepo
    const provider = yield* PaymentProvider
    const states = yield* PaymentStates

    const withPayment = (session: ProviderCheckout) =>
      Effect.all({
        session: Effect.succeed(session),
        payment: session.paymentId === null ? Effect.succeed(null) : provider.retrievePayment(session.paymentId),
        setup: session.setupId === null ? Effect.succeed(null) : provider.retrieveCardSetup(session.setupId)
      })

    /**
     * A saved card becomes the org's card for off-session charges (auto-reload, renewals),
     * and auto-reload's failure count starts again. Saving the same card again changes nothing.
     */
    const keepCard = (orgId: string, setup: ProviderCardSetup) =>
      sql.withTransaction(Effect.gen(function*() {
        const now = new Date(yield* Clock.currentTimeMillis)
        const profile = yield* repo.lockProfile(orgId, now)
        if (setup.paymentMethodId === null || profile.card_payment_method_id === setup.paymentMethodId) return
        yield* repo.updateProfile(orgId, {
          customer_id: setup.customerId ?? profile.customer_id,
          card_payment_method_id: setup.paymentMethodId,
          card_brand: setup.card?.brand ?? null,
          card_last4: setup.card?.last4 ?? null,
          card_exp_month: setup.card?.expMonth ?? null,
          card_exp_year: setup.card?.expYear ?? null,
          auto_reload_failures: 0,
          auto_reload_next_attempt_at: null,
          updated_at: now
        })
      })).pipe(Effect.orDie)

    /** The provider's calls, made before any transaction. */
    const read = (sessionId: string) => Effect.flatMap(provider.retrieveCheckout(sessionId), withPayment)

    /** Applies what was read (inside the webhook's transaction, or on its own). */
    const apply = ({ payment, session, setup }: CheckoutState) =>
      Effect.gen(function*() {
        if (session.mode === "setup") {
          if (session.status === "complete" && setup?.succeeded === true && session.orgId !== null) {
            yield* keepCard(session.orgId, setup)
          }
          return Option.none<PaymentRow>()
        }
        const applied = payment === null ? Option.none<PaymentRow>() : yield* states.apply(payment)
        const paid = payment !== null && (payment.status === "succeeded" || payment.status === "processing")
        if (session.status !== "expired" || paid || session.ourPaymentId === null) return applied
        return yield* states.endCheckout(session.ourPaymentId, session.id)
      })

    /** The owner came back from the hosted page (or a webhook named the session). */
    const sync = (sessionId: string) => Effect.flatMap(read(sessionId), apply)

    /** Ends an unpaid checkout at the provider (the owner cancelled, or it is too old); one paid meanwhile is credited. */
    const end = (row: PaymentRow) =>
      row.checkout_session_id === null
        ? Effect.succeed(Option.some(row))
        : Effect.flatMap(Effect.flatMap(provider.expireCheckout(row.checkout_session_id), withPayment), apply)

    return { read, apply, sync, end } as const
  }),
  dependencies: [PaymentStates.Default, BillingRepo.Default]
}) {}
