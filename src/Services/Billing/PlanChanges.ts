import { Clock, Effect, Option } from "effect"
import type { OrgActor } from "../../Domain/Current.js"
import { foundingOffer, type PlanId, plans } from "../../Domain/Plans.js"
import { Conflict, InvalidInput, OfferUnavailable } from "../../Errors/ApiErrors.js"
import { requireOwner } from "../Auth/Roles.js"
import { BillingRepo } from "./BillingRepo.js"
import { PaymentProvider } from "./PaymentProvider.js"
import { type CheckoutReturn, Payments, type StartedPayment } from "./Payments.js"
import { planFeeCents } from "./PlanFees.js"
import { PlanPrices } from "./PlanPrices.js"
import { PlanSubscriptions } from "./PlanSubscriptions.js"

/**
 * Moving an org between Pay as you go, Pro and Max. A paid plan is a subscription at the
 * payment provider (PlanSubscriptions.ts follows it):
 *
 * - from Pay as you go, Pro or Max starts a checkout in `mode: subscription` (the owner pays
 *   the first month on the hosted page; the card is kept for renewals) and the plan changes
 *   when it is paid;
 * - between Pro and Max, the subscription moves to the other price at once, the provider
 *   invoicing the difference for the rest of the month (prorated);
 * - Pay as you go ends the subscription at once.
 *
 * Limits and quotas read the org's plan on every request, so they follow at once; a
 * downgrade keeps existing agents and members and refuses new ones over the limit.
 *
 * The founding offer (Pro at the founding fee for life) is for the first orgs that take
 * it, once per org, until it ends. A seat is reserved when its checkout starts (under one
 * lock, so it cannot be oversold), taken when the first month is paid, and given back when
 * the checkout expires unpaid. An org holding a seat is on the founding price whenever it is
 * on Pro.
 */
export interface PlanChangeRequest {
  readonly plan: PlanId
  readonly offer?: string | null | undefined
  readonly idempotency_key?: string | undefined
}

export type PlanChangeResult =
  | { readonly _tag: "changed"; readonly plan: PlanId }
  | { readonly _tag: "checkout"; readonly plan: PlanId; readonly payment: StartedPayment }

export class PlanChanges extends Effect.Service<PlanChanges>()("Billing/PlanChanges", {
  effect: Effect.gen(function*() {
    const repo = yield* BillingRepo
    const payments = yield* Payments
    const provider = yield* PaymentProvider
    const prices = yield* PlanPrices
    const subscriptions = yield* PlanSubscriptions

    const now = Effect.map(Clock.currentTimeMillis, (ms) => new Date(ms))

    const offerStatus = Effect.gen(function*() {
      const taken = yield* repo.offerSeatsTaken
      const ended = (yield* Clock.currentTimeMillis) > Date.parse(foundingOffer.ends_at)
      const remaining = Math.max(foundingOffer.total_seats - taken, 0)
      return {
        taken,
        remaining,
        status: ended ? "ended" as const : remaining <= 0 ? "sold_out" as const : "open" as const
      }
    })

    /** Reserves the org's founding seat (run under the offer's lock) or says why not. */
    const reserveSeat = (orgId: string, paymentId: string, at: Date) =>
      Effect.gen(function*() {
        yield* repo.lockOffer
        if (at.getTime() > Date.parse(foundingOffer.ends_at)) {
          return yield* new OfferUnavailable({ message: `The founding offer ended on ${foundingOffer.ends_at}` })
        }
        const mine = yield* repo.offerClaimOf(orgId)
        if (Option.isSome(mine)) {
          return yield* new OfferUnavailable({
            message: mine.value === "taken"
              ? "This org has already used the founding offer (once per org)"
              : "This org's founding-offer checkout is already under way; finish it, or wait until it expires"
          })
        }
        if ((yield* repo.offerSeatsTaken) >= foundingOffer.total_seats) {
          return yield* new OfferUnavailable({ message: `All ${foundingOffer.total_seats} founding seats are taken` })
        }
        yield* repo.reserveOfferSeat(orgId, paymentId, at)
      })

    /** Pay as you go: the subscription ends now (no mail: the owner chose it). */
    const toPayg = (orgId: string, subscriptionId: string | null) =>
      Effect.gen(function*() {
        if (subscriptionId !== null) {
          const ended = yield* provider.cancelSubscription(subscriptionId)
          yield* subscriptions.apply({ subscription: ended, invoice: null }, true)
        }
        // An org without a subscription (or whose subscription was not its plan) is moved all the same.
        yield* subscriptions.moveToPayg(orgId)
      })

    const change = (actor: OrgActor, request: PlanChangeRequest, checkout: CheckoutReturn) =>
      Effect.gen(function*() {
        yield* payments.requireConfigured
        yield* requireOwner(actor)
        const org = yield* repo.org(actor.org_id)
        const current = Option.match(org, { onNone: () => "payg" as PlanId, onSome: (o) => o.plan })
        const profile = yield* repo.profile(actor.org_id)
        const subscriptionId = Option.getOrNull(Option.flatMapNullable(profile, (p) => p.subscription_id))
        const offer = request.offer ?? null
        if (offer !== null && (offer !== foundingOffer.id || request.plan !== foundingOffer.plan)) {
          return yield* new InvalidInput({
            message: `The only offer is ${foundingOffer.id}, for the ${foundingOffer.plan} plan`
          })
        }
        if (request.plan === "payg") {
          if (current !== "payg" || subscriptionId !== null) yield* toPayg(actor.org_id, subscriptionId)
          return { _tag: "changed", plan: "payg" } satisfies PlanChangeResult
        }
        const plan = request.plan
        if (subscriptionId !== null) {
          const claim = yield* repo.offerClaimOf(actor.org_id)
          if (offer !== null) {
            return yield* new OfferUnavailable({
              message: Option.isSome(claim) && claim.value === "taken"
                ? "This org has already used the founding offer (once per org)"
                : "The founding offer is for subscribing from Pay as you go; this org already has a paid plan"
            })
          }
          if (plan === current) {
            return yield* new Conflict({
              message: `The org is already on ${plans[current].name}; it renews every month`
            })
          }
          const priceId = yield* prices.priceFor(plan, Option.isSome(claim) && claim.value === "taken")
          const moved = yield* provider.changeSubscriptionPrice({
            subscriptionId,
            priceId,
            idempotencyKey: `plan-change:${subscriptionId}:${plan}:${
              request.idempotency_key ?? (yield* now).toISOString()
            }`
          })
          // The prorated invoice, when the provider charged one now, is one of the org's plan payments.
          yield* subscriptions.apply(yield* subscriptions.read(moved.id))
          return { _tag: "changed", plan } satisfies PlanChangeResult
        }
        const started = yield* payments.start(
          actor,
          {
            purpose: "plan",
            credits: 0n,
            usdCents: planFeeCents(plan, offer !== null),
            currency: "usd",
            saveCard: true,
            plan,
            offer,
            checkout
          },
          request.idempotency_key,
          ({ now: reservedAt, orgId, paymentId }) =>
            offer === null ? Effect.void : reserveSeat(orgId, paymentId, reservedAt)
        ).pipe(
          // A plan fee is charged in USD: no rate is ever needed.
          Effect.catchTag("fx_unavailable", Effect.die)
        )
        return { _tag: "checkout", plan: current, payment: started } satisfies PlanChangeResult
      })

    return { change, offerStatus } as const
  }),
  dependencies: [
    BillingRepo.Default,
    Payments.Default,
    PlanPrices.Default,
    PlanSubscriptions.Default
  ]
}) {}
