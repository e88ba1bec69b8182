import { SqlClient } from "@effect/sql"
import { Clock, Effect, Option } from "effect"
import { randomUUID } from "node:crypto"
import { parseDecimal } from "../../Domain/Billing.js"
import { foundingOffer, type PlanId, plans } from "../../Domain/Plans.js"
import { Conflict, InvalidInput, OfferUnavailable } from "../../Errors/ApiErrors.js"
import type { OrgActor } from "../Auth/Current.js"
import { requireOwner } from "../Auth/Roles.js"
import { OrgsRepo } from "../Orgs/OrgsRepo.js"
import { BillingMail } from "./BillingMail.js"
import { BillingRepo, offSessionPayment } from "./BillingRepo.js"
import { PaymentProvider } from "./PaymentProvider.js"
import { Payments } from "./Payments.js"
import { PaymentStates } from "./PaymentStates.js"

/**
 * Moving an org between Pay as you go, Pro and Max. A paid plan's monthly fee is a
 * payment the owner confirms like a top-up (the card is kept for renewals); the plan
 * takes effect the moment that payment succeeds, for one calendar month, and renews on
 * the saved card (`renewDue`); a renewal that cannot be charged returns the org to Pay as
 * you go. Moving to Pay as you go takes effect at once. Limits and quotas read the org's
 * plan on every request, so they follow at once; a downgrade keeps existing agents and
 * members and refuses new ones over the limit.
 *
 * The founding offer (Pro at the founding fee for life) is for the first orgs that take
 * it, once per org, until it ends. A seat is reserved when its payment starts (under one
 * lock, so it cannot be oversold) and taken when the payment succeeds; a payment that
 * expires unpaid gives its seat back.
 */
export interface PlanChangeRequest {
  readonly plan: PlanId
  readonly offer?: string | null | undefined
  readonly idempotency_key?: string | undefined
}

const feeCents = (usd: string) => {
  const d = parseDecimal(usd)!
  return d.scale >= 2 ? d.units / 10n ** BigInt(d.scale - 2) : d.units * 10n ** BigInt(2 - d.scale)
}

export const planFeeCents = (plan: "pro" | "max", founding: boolean) =>
  feeCents(founding ? foundingOffer.monthly_fee_usd : plans[plan].monthly_fee_usd)

export class PlanChanges extends Effect.Service<PlanChanges>()("Billing/PlanChanges", {
  effect: Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const repo = yield* BillingRepo
    const orgs = yield* OrgsRepo
    const payments = yield* Payments
    const states = yield* PaymentStates
    const provider = yield* PaymentProvider
    const mail = yield* BillingMail

    const now = Effect.map(Clock.currentTimeMillis, (ms) => new Date(ms))

    /** Seats of the founding offer reserved or taken. */
    const offerTaken = repo.offerSeatsTaken

    const offerStatus = Effect.gen(function*() {
      const taken = yield* offerTaken
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
              : "This org's founding-offer payment is already under way; confirm it, or wait until it expires"
          })
        }
        if ((yield* offerTaken) >= foundingOffer.total_seats) {
          return yield* new OfferUnavailable({ message: `All ${foundingOffer.total_seats} founding seats are taken` })
        }
        yield* repo.reserveOfferSeat(orgId, paymentId, at)
      })

    const toPayg = (orgId: string, at: Date) =>
      sql.withTransaction(Effect.gen(function*() {
        yield* repo.lockProfile(orgId, at)
        yield* orgs.setPlan(orgId, "payg")
        yield* repo.updateProfile(orgId, { plan_period_end: null, plan_founding: false, updated_at: at })
      })).pipe(Effect.orDie)

    const change = (actor: OrgActor, request: PlanChangeRequest) =>
      Effect.gen(function*() {
        yield* payments.requireConfigured
        yield* requireOwner(actor)
        const at = yield* now
        const org = yield* repo.org(actor.org_id)
        const current = Option.match(org, { onNone: () => "payg" as PlanId, onSome: (o) => o.plan })
        const offer = request.offer ?? null
        if (offer !== null && (offer !== foundingOffer.id || request.plan !== foundingOffer.plan)) {
          return yield* new InvalidInput({
            message: `The only offer is ${foundingOffer.id}, for the ${foundingOffer.plan} plan`
          })
        }
        if (request.plan === "payg") {
          if (current !== "payg") yield* toPayg(actor.org_id, at)
          return { plan: "payg" as PlanId, payment: null }
        }
        if (request.plan === current && offer === null) {
          return yield* new Conflict({
            message: `The org is already on ${plans[current].name}; it renews on the saved card`
          })
        }
        const plan = request.plan
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
            checkout: null
          },
          request.idempotency_key,
          ({ now: reservedAt, orgId, paymentId }) =>
            offer === null ? Effect.void : reserveSeat(orgId, paymentId, reservedAt)
        ).pipe(
          // A plan fee is charged in USD: no rate is ever needed.
          Effect.catchTag("fx_unavailable", Effect.die)
        )
        return { plan: current, payment: started }
      })

    /** Renews every paid plan whose month ended, on the saved card; a plan that cannot be paid ends. */
    const renewDue = Effect.gen(function*() {
      if (provider.kind === "off") return 0
      const at = yield* now
      const due = yield* repo.dueRenewals(at)
      let renewed = 0
      for (const org of due) {
        const dedupe = `plan-ended:${org.org_id}:${org.plan_period_end.toISOString()}`
        const end = (reason: string) =>
          sql.withTransaction(
            Effect.zipRight(toPayg(org.org_id, at), mail.planEnded(org.org_id, plans[org.plan].name, reason, dedupe))
          )
            .pipe(Effect.orDie)
        if (org.customer_id === null || org.card_payment_method_id === null) {
          yield* end("There is no saved card to renew the plan's monthly fee on.")
          continue
        }
        const cents = planFeeCents(org.plan, org.plan_founding)
        const id = randomUUID()
        const inserted = yield* repo.insertPayment(offSessionPayment({
          id,
          orgId: org.org_id,
          purpose: "plan",
          provider: provider.kind === "stripe" ? "stripe" : "sandbox",
          // One renewal per period, across replicas: the key is unique.
          providerIdempotencyKey: `renewal:${org.org_id}:${org.plan_period_end.toISOString()}`,
          cents,
          credits: 0n,
          plan: org.plan,
          offer: org.plan_founding ? foundingOffer.id : null,
          at
        })).pipe(Effect.orDie)
        if (Option.isNone(inserted)) continue
        const outcome = yield* provider.chargeOffSession({
          ourPaymentId: id,
          amountMinor: cents,
          currency: "usd",
          description: `Plan ${org.plan}, renewal`,
          customerId: org.customer_id,
          paymentMethodId: org.card_payment_method_id,
          idempotencyKey: inserted.value.provider_idempotency_key
        }).pipe(Effect.either)
        if (outcome._tag === "Left") {
          // Nothing changed: the plan stays until the provider answers a later round.
          yield* repo.deletePayment(id).pipe(Effect.orDie)
          continue
        }
        const after = yield* states.apply(outcome.right)
        if (Option.isSome(after) && after.value.status === "succeeded") renewed++
        else yield* end(`The renewal charge on the saved card failed: ${outcome.right.failureMessage ?? "declined"}.`)
      }
      return renewed
    })

    return { change, offerStatus, renewDue } as const
  }),
  dependencies: [BillingRepo.Default, OrgsRepo.Default, Payments.Default, PaymentStates.Default, BillingMail.Default]
}) {}
