import { Schema } from "effect"

/**
 * Plans and everything priced or limited per plan. This table is what `/v1/pricing`
 * publishes and what the services enforce, so the two cannot disagree.
 */
export const PlanId = Schema.Literal("payg", "pro", "max").annotations({ identifier: "PlanId" })
export type PlanId = typeof PlanId.Type

export interface PlanTerms {
  readonly id: PlanId
  readonly name: string
  readonly monthly_fee_usd: string
  /** Daily `POST /v1/recommend` score lookups; null = no fixed limit. */
  readonly daily_score_lookups: number | null
  /** Daily free-text lookups (recommend with `task`); null = no fixed limit. */
  readonly daily_free_text_lookups: number | null
  /** Gateway price per call = ceil(base price x basis points / 10,000). */
  readonly gateway_price_basis_points: number
  readonly max_active_agents: number
  readonly max_seats: number
}

export const plans: { readonly [P in PlanId]: PlanTerms } = {
  payg: {
    id: "payg",
    name: "Pay as you go",
    monthly_fee_usd: "0.000",
    daily_score_lookups: 1000,
    daily_free_text_lookups: 100,
    gateway_price_basis_points: 10_000,
    max_active_agents: 5,
    max_seats: 3
  },
  pro: {
    id: "pro",
    name: "Pro",
    monthly_fee_usd: "99.000",
    daily_score_lookups: 10_000,
    daily_free_text_lookups: 500,
    gateway_price_basis_points: 9_000,
    max_active_agents: 25,
    max_seats: 10
  },
  max: {
    id: "max",
    name: "Max",
    monthly_fee_usd: "499.000",
    daily_score_lookups: null,
    daily_free_text_lookups: null,
    gateway_price_basis_points: 8_000,
    max_active_agents: 100,
    max_seats: 50
  }
}

/** The gateway price of one call for a plan, in whole credits (never below 1). */
export const gatewayPrice = (basePriceCredits: bigint, plan: PlanId): bigint => {
  const bp = BigInt(plans[plan].gateway_price_basis_points)
  const scaled = (basePriceCredits * bp + 9_999n) / 10_000n
  return scaled < 1n ? 1n : scaled
}

/** Trial credits granted to every new org, and how long they last. */
export const trialTerms = {
  credits: 5_000n,
  days: 30,
  /** Until the first top-up an org may spend at most this many credits an hour. */
  hourly_spend_limit_credits: 50n
} as const

/** Limits that are the same on every plan. */
export const commonLimits = {
  webhook_endpoints_per_org: 10,
  org_keys_per_org: 20,
  open_disputes_per_org: 100,
  people_lookups_per_domain_per_day: 500,
  new_account_topup_cap_usd: "200.000",
  new_account_topup_cap_days: 14
} as const

/** The founding offer: Pro at a lower fee for life, for the first orgs that take it. */
export const foundingOffer = {
  id: "founding-pro",
  name: "Founding Pro",
  description: "Pro for life at the founding fee, for the first 100 orgs, once per org.",
  plan: "pro" as PlanId,
  monthly_fee_usd: "49.000",
  total_seats: 100,
  ends_at: "2027-03-31T23:59:59.999Z"
} as const
