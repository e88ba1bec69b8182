import { Effect, Option } from "effect"
import type { PaymentRow } from "./BillingRepo.js"
import { PaymentProvider, type ProviderCheckout, type ProviderPayment } from "./PaymentProvider.js"
import { PaymentStates } from "./PaymentStates.js"

/**
 * What a checkout session says about its payment, applied to ours once. The session makes
 * the provider's payment only when the customer pays, so every path that learns about it
 * (the return to the billing page, `checkout.session.completed` / `.expired`, the expiry
 * sweep, the owner cancelling) reads the session, then its payment, and hands the payment
 * to `PaymentStates.apply` (the one exactly-once crediting path, which also serves
 * `payment_intent.*`). A session that ended unpaid ends our payment `canceled`, which
 * gives back its cap allowance.
 */
export interface CheckoutState {
  readonly session: ProviderCheckout
  readonly payment: ProviderPayment | null
}

export class Checkouts extends Effect.Service<Checkouts>()("Billing/Checkouts", {
  effect: Effect.gen(function*() {
    const provider = yield* PaymentProvider
    const states = yield* PaymentStates

    const withPayment = (session: ProviderCheckout) =>
      Effect.map(
        session.paymentId === null ? Effect.succeed(null) : provider.retrievePayment(session.paymentId),
        (payment): CheckoutState => ({ session, payment })
      )

    /** The provider's calls, made before any transaction. */
    const read = (sessionId: string) => Effect.flatMap(provider.retrieveCheckout(sessionId), withPayment)

    /** Applies what was read (inside the webhook's transaction, or on its own). */
    const apply = ({ payment, session }: CheckoutState) =>
      Effect.gen(function*() {
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
  dependencies: [PaymentStates.Default]
}) {}
