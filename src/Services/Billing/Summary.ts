import { Clock, Effect, Option } from "effect"
import { topUpLimits } from "../../Domain/Billing.js"
import { minorToDecimal } from "../../Domain/Billing.js"
import type { OrgActor } from "../../Domain/Current.js"
import { amountOf } from "../../Domain/Money.js"
import { foundingOffer, plans } from "../../Domain/Plans.js"
import { NotFound } from "../../Errors/ApiErrors.js"
import { Ledger } from "../Ledger/Ledger.js"
import { monthOf } from "../Ledger/Time.js"
import { autoReloadRecord } from "./AutoReload.js"
import { BillingRepo } from "./BillingRepo.js"
import { Fx } from "./Fx.js"
import { PaymentProvider } from "./PaymentProvider.js"
import { Payments } from "./Payments.js"
import { planFeeCents } from "./PlanFees.js"
import { TopUps } from "./TopUps.js"

/** What every billing answer says about the provider: a sandbox is labelled as one. */
export const providerLabel = (kind: "stripe" | "sandbox" | "off", publishableKey: string | null) => ({
  name: kind === "stripe" ? "stripe" as const : "sandbox" as const,
  sandbox: kind !== "stripe",
  // The sandbox's emulator is on the service's loopback: no browser's Stripe.js reaches it.
  publishable_key: kind === "stripe" ? publishableKey : null,
  notice: kind === "stripe"
    ? null
    : "Payment sandbox: no money moves. Pay with a test card: 4242 4242 4242 4242 succeeds, 4000 0000 0000 0002 is declined."
})

/** `GET /v1/orgs/{orgId}/billing`: everything a member needs to see about the org's money and plan. */
export class Summary extends Effect.Service<Summary>()("Billing/Summary", {
  effect: Effect.gen(function*() {
    const repo = yield* BillingRepo
    const ledger = yield* Ledger
    const fx = yield* Fx
    const topUps = yield* TopUps
    const payments = yield* Payments
    const provider = yield* PaymentProvider

    const get = (actor: OrgActor) =>
      Effect.gen(function*() {
        yield* payments.requireConfigured
        const org = yield* repo.org(actor.org_id)
        if (Option.isNone(org)) return yield* new NotFound({ message: "No such org" })
        const ms = yield* Clock.currentTimeMillis
        const credits = yield* ledger.orgCredits(actor.org_id)
        const trial = yield* ledger.trialGrant(actor.org_id)
        const profile = yield* repo.profile(actor.org_id)
        const p = Option.getOrNull(profile)
        const plan = org.value.plan
        const rate = yield* fx.latest
        const claim = yield* repo.offerClaimOf(actor.org_id)
        const used = yield* repo.autoReloadedSince(actor.org_id, new Date(`${monthOf(ms)}T00:00:00.000Z`))
        return {
          provider: providerLabel(provider.kind, provider.publishableKey),
          balance: amountOf(credits.balance),
          credits_frozen: credits.frozen,
          funded: credits.funded,
          trial: trial === null ? null : {
            credits: amountOf(trial.credits),
            expires_at: trial.expiresAt.toISOString(),
            expired: trial.expiredAt !== null || trial.expiresAt.getTime() <= ms
          },
          plan: {
            id: plan,
            name: plans[plan].name,
            monthly_fee_usd: plan === "payg" ? "0.00" : minorToDecimal(planFeeCents(plan, p?.plan_founding ?? false)),
            founding_offer: p?.plan_founding === true ? foundingOffer.id : null,
            founding_offer_claim: Option.match(claim, {
              onNone: () => null,
              onSome: (status) => status === "taken" ? "used" as const : "under_way" as const
            }),
            renews_at: plan === "payg" ? null : p?.plan_period_end?.toISOString() ?? null
          },
          card: p === null || p.card_last4 === null ? null : {
            brand: p.card_brand ?? "card",
            last4: p.card_last4,
            exp_month: p.card_exp_month,
            exp_year: p.card_exp_year
          },
          auto_reload: autoReloadRecord(profile, used),
          topup_cap: yield* topUps.capSummary(actor.org_id),
          top_up_limits: {
            min: amountOf(topUpLimits.min_credits),
            max: amountOf(topUpLimits.max_credits),
            currencies: ["usd", "inr"] as const
          },
          fx: Option.match(rate, {
            onNone: () => ({
              status: "unavailable" as const,
              inr_per_usd: null,
              rate_date: null,
              fetched_at: null,
              source: "ECB" as const
            }),
            onSome: (r) => ({
              status: fx.isFresh(r, ms) ? "available" as const : "unavailable" as const,
              inr_per_usd: r.inr_per_usd,
              rate_date: r.rate_date,
              fetched_at: r.fetched_at.toISOString(),
              source: "ECB" as const
            })
          })
        }
      })

    return { get } as const
  }),
  dependencies: [BillingRepo.Default, Fx.Default, TopUps.Default, Payments.Default]
}) {}
