import { Effect, Option, SynchronizedRef } from "effect"
import { foundingOffer, plans } from "../../Domain/Plans.js"
import { BillingConfig } from "./BillingConfig.js"
import { PaymentProvider } from "./PaymentProvider.js"
import { feeCents } from "./PlanFees.js"

/**
 * The provider's prices of the paid plans: Pro, Max and the founding Pro fee, each a
 * monthly price named by a setting or found by its lookup key (and made, with its product,
 * when missing). Resolved once, on start or at the first need; a failed look-up is tried
 * again at the next need rather than kept.
 */
export const PLAN_LOOKUP_KEYS = {
  pro: "plan_pro_monthly",
  max: "plan_max_monthly",
  founding: "plan_pro_founding_monthly"
} as const

export type PlanPrice = { readonly plan: "pro" | "max"; readonly founding: boolean }

export class PlanPrices extends Effect.Service<PlanPrices>()("Billing/PlanPrices", {
  effect: Effect.gen(function*() {
    const provider = yield* PaymentProvider
    const config = yield* BillingConfig
    const resolved = yield* SynchronizedRef.make(Option.none<Record<keyof typeof PLAN_LOOKUP_KEYS, string>>())

    const lookUp = Effect.all({
      pro: provider.planPrice({
        lookupKey: PLAN_LOOKUP_KEYS.pro,
        productName: plans.pro.name,
        amountMinor: feeCents(plans.pro.monthly_fee_usd),
        configuredId: config.planPrices.pro
      }),
      max: provider.planPrice({
        lookupKey: PLAN_LOOKUP_KEYS.max,
        productName: plans.max.name,
        amountMinor: feeCents(plans.max.monthly_fee_usd),
        configuredId: config.planPrices.max
      }),
      founding: provider.planPrice({
        lookupKey: PLAN_LOOKUP_KEYS.founding,
        productName: foundingOffer.name,
        amountMinor: feeCents(foundingOffer.monthly_fee_usd),
        configuredId: config.planPrices.founding
      })
    })

    /** The three price ids (one look-up at a time; kept once found). */
    const all = SynchronizedRef.modifyEffect(resolved, (known) =>
      Option.match(known, {
        onSome: (ids) => Effect.succeed([ids, known] as const),
        onNone: () => Effect.map(lookUp, (ids) => [ids, Option.some(ids)] as const)
      }))

    /** The price of a plan; Pro at the founding fee for an org holding a founding seat. */
    const priceFor = (plan: "pro" | "max", founding: boolean) =>
      Effect.map(all, (ids) => plan === "pro" && founding ? ids.founding : ids[plan])

    /** Which plan a price is; undefined for a price that is none of ours. */
    const planOf = (priceId: string | null) =>
      Effect.map(all, (ids): PlanPrice | undefined =>
        priceId === ids.pro
          ? { plan: "pro", founding: false }
          : priceId === ids.max
          ? { plan: "max", founding: false }
          : priceId === ids.founding
          ? { plan: "pro", founding: true }
          : undefined)

    return { all, priceFor, planOf } as const
  }),
  dependencies: [BillingConfig.Default]
}) {}
