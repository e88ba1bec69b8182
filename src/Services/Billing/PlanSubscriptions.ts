import { SqlClient } from "@effect/sql"
import { Clock, Effect, Option, Schema } from "effect"
import { randomUUID } from "node:crypto"
import { OrgId, PaymentId } from "../../Domain/Ids.js"
import { foundingOffer, plans } from "../../Domain/Plans.js"
import { OrgsRepo } from "../Orgs/OrgsRepo.js"
import { BillingMail } from "./BillingMail.js"
import { BillingRepo, offSessionPayment } from "./BillingRepo.js"
import {
  PaymentProvider,
  type ProviderCardSetup,
  type ProviderEvent,
  type ProviderInvoice,
  type ProviderPayment,
  type ProviderSubscription
} from "./PaymentProvider.js"
import { PaymentStates } from "./PaymentStates.js"
import { PlanPrices } from "./PlanPrices.js"
import { SavedCards } from "./SavedCards.js"

/**
 * An org's paid plan follows its subscription at the payment provider, which renews it
 * every month, retries a renewal it could not charge and ends it when the retries fail.
 * Whatever tells us a subscription changed (its events, an invoice's events, the owner
 * coming back from the checkout) reads the subscription again from
 * the provider and applies what it says now, so events in any order, late or many times
 * over leave the same plan:
 *
 * - `active`, `trialing`, `past_due` (being retried): the org is on the price's plan until
 *   the period's end the provider gives, and the profile names the subscription;
 * - `unpaid`, `canceled`, `incomplete_expired`: if it is the org's subscription, the org
 *   returns to Pay as you go and the owners are mailed (not when the owner chose it here);
 * - `incomplete` (the first month not paid yet): nothing.
 *
 * Each invoice with an amount is one of the org's plan payments (history and receipts):
 * the first one is the checkout's own payment (which takes the founding seat it reserved),
 * renewals and prorated changes are new rows keyed by the invoice, applied by
 * `PaymentStates.apply` (exactly once, moving only forward).
 */
export interface SubscriptionState {
  readonly subscription: ProviderSubscription
  /** The invoice the news is about, or the subscription's latest. */
  readonly invoice: ProviderInvoice | null
}

export type PlanEventState =
  | { readonly kind: "subscription"; readonly state: SubscriptionState }
  | { readonly kind: "card"; readonly customerId: string; readonly card: ProviderCardSetup }

const LIVE = new Set(["active", "trialing", "past_due"])
const ENDED = new Set(["unpaid", "canceled", "incomplete_expired"])

/** An invoice as a payment of ours, for the one state machine of payments. */
const invoicePayment = (
  invoice: ProviderInvoice,
  subscription: ProviderSubscription,
  ourPaymentId: PaymentId | null
): ProviderPayment => ({
  id: invoice.id,
  status: invoice.status === "paid"
    ? "succeeded"
    : invoice.status === "void" || invoice.status === "uncollectible"
    ? "canceled"
    : "requires_payment_method",
  amountMinor: invoice.amountDueMinor,
  currency: invoice.currency,
  clientSecret: null,
  customerId: subscription.customerId,
  paymentMethodId: subscription.paymentMethodId,
  card: subscription.card,
  receiptUrl: invoice.receiptUrl,
  failureMessage: invoice.failureMessage,
  ourPaymentId
})

export class PlanSubscriptions extends Effect.Service<PlanSubscriptions>()("Billing/PlanSubscriptions", {
  effect: Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const repo = yield* BillingRepo
    const orgs = yield* OrgsRepo
    const provider = yield* PaymentProvider
    const states = yield* PaymentStates
    const prices = yield* PlanPrices
    const mail = yield* BillingMail
    const cards = yield* SavedCards

    const now = Effect.map(Clock.currentTimeMillis, (ms) => new Date(ms))

    /** A subscription and an invoice of it (the latest, unless one is named), read from the provider. */
    const read = (subscriptionId: string, invoiceId?: string) =>
      Effect.gen(function*() {
        const subscription = yield* provider.retrieveSubscription(subscriptionId)
        const wanted = invoiceId ?? subscription.latestInvoiceId
        const invoice = wanted === null ? null : yield* provider.retrieveInvoice(wanted)
        return { subscription, invoice } satisfies SubscriptionState
      })

    // The org id is the subscription's metadata, written by us; one that is not an org id is looked up by customer.
    const orgOf = (subscription: ProviderSubscription) =>
      Option.match(Option.flatMap(Option.fromNullable(subscription.orgId), Schema.decodeOption(OrgId)), {
        onNone: () => repo.orgOfCustomer(subscription.customerId),
        onSome: (orgId) => Effect.succeed(Option.some(orgId))
      })

    /** Pay as you go at once; limits and quotas read the org's plan on every request. */
    const toPayg = (orgId: string, at: Date) =>
      Effect.gen(function*() {
        yield* repo.lockProfile(orgId, at)
        yield* orgs.setPlan(orgId, "payg")
        yield* repo.updateProfile(orgId, {
          subscription_id: null,
          plan_period_end: null,
          plan_founding: false,
          updated_at: at
        })
      })

    /** The org's plan as the subscription says now. `chosen`: the owner ended it here (no mail). */
    const applySubscription = (subscription: ProviderSubscription, chosen: boolean) =>
      Effect.gen(function*() {
        const at = yield* now
        const orgId = yield* orgOf(subscription)
        if (Option.isNone(orgId)) return
        const price = yield* prices.planOf(subscription.priceId).pipe(Effect.orDie)
        const profile = yield* repo.lockProfile(orgId.value, at)
        if (LIVE.has(subscription.status) && price !== undefined) {
          yield* orgs.setPlan(orgId.value, price.plan)
          yield* repo.updateProfile(orgId.value, {
            subscription_id: subscription.id,
            plan_period_end: subscription.currentPeriodEnd,
            plan_founding: price.founding,
            updated_at: at
          })
          return
        }
        if (!ENDED.has(subscription.status) || profile.subscription_id !== subscription.id) return
        const org = yield* repo.org(orgId.value)
        const planName = Option.match(org, { onNone: () => "paid", onSome: (o) => plans[o.plan].name })
        yield* toPayg(orgId.value, at)
        if (chosen) return
        yield* mail.planEnded(
          orgId.value,
          planName,
          subscription.endedBecause === "cancellation_requested"
            ? "The subscription was cancelled in the billing portal."
            : "The monthly fee could not be charged to the card, and the payment provider's retries failed too.",
          `plan-ended:${orgId.value}:${subscription.id}`
        )
      })

    /**
     * Our payment for an invoice: the checkout's own for the first month, else a row keyed by
     * the invoice (null when an earlier event wrote it: it is found by the invoice's id).
     */
    const paymentFor = (orgId: OrgId, invoice: ProviderInvoice, subscription: ProviderSubscription) =>
      Effect.gen(function*() {
        if (invoice.billingReason === "subscription_create" && subscription.ourPaymentId !== null) {
          return subscription.ourPaymentId
        }
        const price = yield* prices.planOf(subscription.priceId).pipe(Effect.orDie)
        if (price === undefined) return null
        const inserted = yield* repo.insertPayment(offSessionPayment({
          id: PaymentId.make(randomUUID()),
          orgId,
          purpose: "plan",
          provider: provider.kind === "stripe" ? "stripe" : "sandbox",
          providerIdempotencyKey: `invoice:${invoice.id}`,
          cents: invoice.amountDueMinor,
          credits: 0n,
          plan: price.plan,
          offer: price.founding ? foundingOffer.id : null,
          at: yield* now
        })).pipe(Effect.orDie)
        return Option.getOrNull(Option.map(inserted, (row) => row.id))
      })

    /** An invoice that charged (or tried to) applied as a payment of ours, once. */
    const applyInvoice = (invoice: ProviderInvoice, subscription: ProviderSubscription) =>
      Effect.gen(function*() {
        const orgId = yield* orgOf(subscription)
        if (Option.isNone(orgId)) return
        if (invoice.amountDueMinor <= 0n || (invoice.status !== "paid" && !invoice.attempted)) return
        const ours = yield* paymentFor(orgId.value, invoice, subscription)
        const after = yield* states.apply(invoicePayment(invoice, subscription, ours))
        // The provider retries; the owners hear of the first failure of each invoice (the mail's key is the payment's).
        if (Option.isSome(after) && after.value.status === "failed" && LIVE.has(subscription.status)) {
          yield* mail.planPaymentFailed(after.value)
        }
      })

    /** Applies a subscription's state: its invoice first (the founding seat, the receipt), then its plan. */
    const apply = (state: SubscriptionState, chosen = false) =>
      sql.withTransaction(Effect.gen(function*() {
        if (state.invoice !== null) yield* applyInvoice(state.invoice, state.subscription)
        yield* applySubscription(state.subscription, chosen)
      })).pipe(Effect.orDie)

    /** The provider's calls for an event, made before any transaction; none for other events. */
    const readEvent = (event: ProviderEvent) =>
      Effect.gen(function*() {
        switch (event.kind) {
          case "subscription_changed":
            return Option.some<PlanEventState>({ kind: "subscription", state: yield* read(event.subscriptionId) })
          case "invoice_changed":
            return Option.some<PlanEventState>({
              kind: "subscription",
              state: yield* read(event.subscriptionId, event.invoiceId)
            })
          case "customer_changed":
            return Option.some<PlanEventState>({
              kind: "card",
              customerId: event.customerId,
              card: yield* provider.retrieveDefaultCard(event.customerId)
            })
          default:
            return Option.none<PlanEventState>()
        }
      })

    const applyEvent = (read: PlanEventState) =>
      read.kind === "subscription"
        ? apply(read.state)
        : Effect.gen(function*() {
          // A card the owner set as the default in the portal becomes the org's card.
          const orgId = yield* repo.orgOfCustomer(read.customerId)
          if (Option.isSome(orgId) && read.card.succeeded) yield* cards.keep(orgId.value, read.card)
        })

    /** Pay as you go now, whatever the org's subscription says (the owner's choice). */
    const moveToPayg = (orgId: string) =>
      Effect.flatMap(now, (at) => sql.withTransaction(toPayg(orgId, at))).pipe(Effect.orDie)

    return { read, apply, readEvent, applyEvent, moveToPayg } as const
  }),
  dependencies: [
    BillingRepo.Default,
    OrgsRepo.Default,
    PaymentStates.Default,
    PlanPrices.Default,
    BillingMail.Default,
    SavedCards.Default
  ]
}) {}
