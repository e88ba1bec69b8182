import { Clock, Effect, Option } from "effect"
import { capState, CREDITS_PER_CENT, isAmountProblem, topUpCredits, withinCap } from "../../Domain/Billing.js"
import type { OrgActor } from "../../Domain/Current.js"
import type { OrgId } from "../../Domain/Ids.js"
import { amountOf, creditsToUsd } from "../../Domain/Money.js"
import { InvalidAmount, InvalidInput, NotFound, TopupCap } from "../../Errors/ApiErrors.js"
import { requireOwner } from "../Auth/Roles.js"
import { BillingRepo } from "./BillingRepo.js"
import { type CheckoutReturn, Payments } from "./Payments.js"

/**
 * `POST /v1/orgs/{orgId}/billing/top-ups`: an owner buys credits with a card, in USD or INR.
 * The new-account cap is checked under the org's billing profile lock, counting top-ups
 * still being paid, so two at once cannot pass it together.
 */
export interface TopUpRequest {
  readonly credits?: unknown
  readonly amount_usd?: unknown
  readonly currency?: "usd" | "inr" | undefined
  readonly save_card?: boolean | undefined
  readonly idempotency_key?: string | undefined
}

export const capMessage = (remaining: bigint, endsAt: Date) =>
  `New accounts may add up to $200 of credits in their first 14 days; ${remaining} credits ($${
    creditsToUsd(remaining)
  }) are left until ${endsAt.toISOString()}`

export class TopUps extends Effect.Service<TopUps>()("Billing/TopUps", {
  effect: Effect.gen(function*() {
    const repo = yield* BillingRepo
    const payments = yield* Payments

    /** The new-account cap of an org now (for the summary and the check). */
    const cap = (orgId: OrgId) =>
      Effect.gen(function*() {
        const org = yield* repo.org(orgId)
        if (Option.isNone(org)) return yield* new NotFound({ message: "No such org" })
        const used = yield* repo.capUsed(orgId)
        return capState(org.value.created_at, yield* Clock.currentTimeMillis, used)
      })

    /** Refuses credits that would take the org past the cap (run under the profile lock). */
    const checkCap = (orgId: OrgId, credits: bigint) =>
      Effect.gen(function*() {
        const state = yield* cap(orgId).pipe(Effect.catchTag("not_found", Effect.die))
        if (!withinCap(state, credits)) {
          return yield* new TopupCap({ message: capMessage(state.remaining, state.endsAt) })
        }
      })

    /**
     * Starts a top-up: paid with a client secret (API clients with their own card form), or,
     * with `checkout`, on the provider's hosted page the owner is sent to from the dashboard.
     */
    const start = (actor: OrgActor, request: TopUpRequest, checkout: CheckoutReturn | null = null) =>
      Effect.gen(function*() {
        yield* payments.requireConfigured
        yield* requireOwner(actor)
        const credits = topUpCredits(request)
        if (isAmountProblem(credits)) {
          return yield* (credits.problem.startsWith("Give exactly one")
            ? new InvalidInput({ message: credits.problem })
            : new InvalidAmount({ message: credits.problem }))
        }
        const currency = request.currency ?? "usd"
        if (currency === "inr" && request.save_card === true) {
          return yield* new InvalidInput({
            message: "Cards are saved for USD auto-reload only; INR top-ups are one-time payments (RBI e-mandate rules)"
          })
        }
        return yield* payments.start(
          actor,
          {
            purpose: "top_up",
            credits,
            usdCents: credits / CREDITS_PER_CENT,
            currency,
            saveCard: request.save_card === true,
            plan: null,
            offer: null,
            checkout
          },
          request.idempotency_key,
          ({ orgId }) => checkCap(orgId, credits)
        )
      })

    const capSummary = (orgId: OrgId) =>
      Effect.map(cap(orgId), (state) => ({
        applies: state.applies,
        limit: amountOf(state.limit),
        used: amountOf(state.used),
        remaining: state.applies ? amountOf(state.remaining) : null,
        ends_at: state.endsAt.toISOString()
      }))

    return { start, cap, checkCap, capSummary } as const
  }),
  dependencies: [BillingRepo.Default, Payments.Default]
}) {}
