import { SqlClient } from "@effect/sql"
import { Clock, Effect, Option } from "effect"
import { NotConfigured } from "../../Errors/ApiErrors.js"
import { BillingRepo } from "./BillingRepo.js"
import { Checkouts } from "./Checkouts.js"
import { PaymentProvider } from "./PaymentProvider.js"
import { PaymentReturns } from "./PaymentReturns.js"
import { PaymentStates } from "./PaymentStates.js"
import { PlanSubscriptions } from "./PlanSubscriptions.js"
import { SavedCards } from "./SavedCards.js"

/**
 * `POST /v1/billing/webhook`: the payment provider's events. The signature is checked with
 * the provider's library against the raw body before anything is parsed (`invalid_signature`
 * otherwise, and nothing changes). A handled event's id is recorded in the transaction of
 * its effect, so a redelivery after a crash does the work, and a duplicate (even one
 * arriving at the same moment) does nothing.
 *
 * - `payment_intent.succeeded` / `.payment_failed` / `.canceled`: the payment's state,
 *   read again from the provider (the source of truth), applied once (credits, card,
 *   plan, receipts; a failed auto-reload counts toward switching it off);
 * - `checkout.session.completed` / `.expired`: the session and its payment, read again from
 *   the provider and applied the same way; an expired session ends an unpaid payment,
 *   giving back its cap allowance;
 * - `customer.subscription.created` / `.updated` / `.deleted`, `invoice.paid` /
 *   `.payment_failed`: the subscription (and the invoice) read again and applied
 *   (PlanSubscriptions.ts: the org's plan, its plan payments, the founding seat);
 * - `customer.updated`: the customer's default card (replaced in the portal) becomes the
 *   org's card;
 * - `payment_method.detached`: a saved card removed in the portal is the org's card no more
 *   (auto-reload stops charging it);
 * - `charge.refunded`: the refunded share of the credits is taken back;
 * - `charge.dispute.created`: the disputed share is taken back and the org's credits are
 *   frozen;
 * - `charge.dispute.closed`: won, the disputed share is given back and the freeze lifted
 *   (when nothing else holds it); lost, the credits stay taken back and frozen.
 *
 * Refunds and disputes are accumulated on the payment whatever their order
 * (PaymentReturns.ts).
 */
export class PaymentWebhooks extends Effect.Service<PaymentWebhooks>()("Billing/PaymentWebhooks", {
  effect: Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const repo = yield* BillingRepo
    const provider = yield* PaymentProvider
    const states = yield* PaymentStates
    const returns = yield* PaymentReturns
    const checkouts = yield* Checkouts
    const subscriptions = yield* PlanSubscriptions
    const cards = yield* SavedCards

    const receive = (rawBody: string, signature: string | undefined) =>
      Effect.gen(function*() {
        if (provider.kind === "off") {
          return yield* new NotConfigured({
            message: "Payment webhooks need Stripe (STRIPE_SECRET_KEY, STRIPE_PUBLISHABLE_KEY, STRIPE_WEBHOOK_SECRET)"
          })
        }
        const event = yield* provider.verifyWebhook(rawBody, signature)
        if (event.kind === "ignored") return { received: true, handled: false, duplicate: false }
        if (yield* repo.eventSeen(event.eventId)) return { received: true, handled: true, duplicate: true }
        // The provider call happens before the transaction: none is held open across it.
        const fresh = event.kind === "payment_changed" ? yield* provider.retrievePayment(event.payment.id) : null
        const checkout = event.kind === "checkout_changed" ? yield* checkouts.read(event.sessionId) : null
        const plan = yield* subscriptions.readEvent(event)
        const first = yield* sql.withTransaction(Effect.gen(function*() {
          const now = new Date(yield* Clock.currentTimeMillis)
          if (!(yield* repo.recordEvent(event.eventId, event.type, now))) return false
          if (event.kind === "payment_changed") yield* states.apply(fresh!)
          else if (event.kind === "checkout_changed") yield* checkouts.apply(checkout!)
          else if (Option.isSome(plan)) yield* subscriptions.applyEvent(plan.value)
          else if (event.kind === "refunded") {
            yield* returns.record(event.paymentId, { kind: "refund", refundedMinor: event.amountRefundedMinor })
          } else if (event.kind === "card_detached") {
            yield* cards.forget(event.paymentMethodId)
          } else if (event.kind === "disputed") {
            yield* returns.record(event.paymentId, {
              kind: "dispute",
              amountMinor: event.amountMinor,
              status: event.status
            })
          }
          return true
        })).pipe(Effect.orDie)
        return { received: true, handled: true, duplicate: !first }
      })

    return { receive } as const
  }),
  dependencies: [
    BillingRepo.Default,
    PaymentStates.Default,
    PaymentReturns.Default,
    Checkouts.Default,
    PlanSubscriptions.Default,
    SavedCards.Default
  ]
}) {}
