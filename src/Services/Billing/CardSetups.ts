import { Clock, Effect, Option } from "effect"
import { randomUUID } from "node:crypto"
import type { OrgActor } from "../../Domain/Current.js"
import { requireOwner } from "../Auth/Roles.js"
import { BillingRepo } from "./BillingRepo.js"
import { Checkouts } from "./Checkouts.js"
import { PaymentProvider } from "./PaymentProvider.js"
import { type CheckoutReturn, Payments } from "./Payments.js"

/**
 * Adding or replacing the saved card without a purchase: the owner is sent to the
 * provider's hosted page in `mode: setup` (nothing is charged) and comes back to the billing
 * page, which asks `finish`; `checkout.session.completed` does the same when the owner never
 * comes back (Checkouts.ts keeps the card). The session is remembered on the org's billing
 * profile, so the return asks the provider only about the org's own setup, never about an id
 * from the address bar.
 */
export class CardSetups extends Effect.Service<CardSetups>()("Billing/CardSetups", {
  effect: Effect.gen(function*() {
    const repo = yield* BillingRepo
    const provider = yield* PaymentProvider
    const payments = yield* Payments
    const checkouts = yield* Checkouts

    const start = (actor: OrgActor, checkout: CheckoutReturn) =>
      Effect.gen(function*() {
        yield* payments.requireConfigured
        yield* requireOwner(actor)
        const customerId = yield* payments.customerFor(actor.org_id)
        const page = `${checkout.dashboardUrl}/orgs/${actor.org_id}/billing`
        const session = yield* provider.createCardSetup({
          orgId: actor.org_id,
          customerId,
          successUrl: `${page}?card_setup={CHECKOUT_SESSION_ID}`,
          cancelUrl: page,
          // Each click is a new setup: nothing is charged, so a repeat costs nothing.
          idempotencyKey: `card-setup:${actor.org_id}:${randomUUID()}`
        })
        const now = new Date(yield* Clock.currentTimeMillis)
        yield* repo.updateProfile(actor.org_id, { card_setup_session_id: session.id, updated_at: now }).pipe(
          Effect.orDie
        )
        return { checkoutUrl: session.url }
      })

    /** The owner came back: the org's last card setup, applied (once); answers whether it saved a card. */
    const finish = (actor: OrgActor) =>
      Effect.gen(function*() {
        yield* payments.requireConfigured
        const profile = yield* repo.profile(actor.org_id)
        const sessionId = Option.getOrNull(Option.flatMapNullable(profile, (p) => p.card_setup_session_id))
        if (sessionId === null) return { status: "none" as const }
        const state = yield* checkouts.read(sessionId)
        yield* checkouts.apply(state)
        return { status: state.session.status === "complete" ? "saved" as const : state.session.status }
      })

    return { start, finish } as const
  }),
  dependencies: [BillingRepo.Default, Payments.Default, Checkouts.Default]
}) {}
