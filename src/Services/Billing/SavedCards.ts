import { SqlClient } from "@effect/sql"
import { Clock, Effect, Option } from "effect"
import { BillingRepo } from "./BillingRepo.js"
import type { ProviderCardSetup } from "./PaymentProvider.js"

/**
 * The org's card for off-session charges (auto-reload), kept from wherever the owner gave
 * it: a card setup on the hosted page, a plan's checkout, the customer portal.
 */
export class SavedCards extends Effect.Service<SavedCards>()("Billing/SavedCards", {
  effect: Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const repo = yield* BillingRepo

    /**
     * A saved card becomes the org's card, and auto-reload's failure count starts again.
     * Saving the same card again changes nothing.
     */
    const keep = (orgId: string, setup: ProviderCardSetup) =>
      sql.withTransaction(Effect.gen(function*() {
        const now = new Date(yield* Clock.currentTimeMillis)
        const profile = yield* repo.lockProfile(orgId, now)
        if (setup.paymentMethodId === null || profile.card_payment_method_id === setup.paymentMethodId) return
        yield* repo.updateProfile(orgId, {
          customer_id: setup.customerId ?? profile.customer_id,
          card_payment_method_id: setup.paymentMethodId,
          card_brand: setup.card?.brand ?? null,
          card_last4: setup.card?.last4 ?? null,
          card_exp_month: setup.card?.expMonth ?? null,
          card_exp_year: setup.card?.expYear ?? null,
          auto_reload_failures: 0,
          auto_reload_next_attempt_at: null,
          updated_at: now
        })
      })).pipe(Effect.orDie)

    /**
     * A card removed at the provider (the customer portal detaches it) is no longer the org's
     * card: auto-reload stops charging it and the billing page asks for a new one. Another card
     * saved since, or a second delivery of the event, changes nothing.
     */
    const forget = (paymentMethodId: string) =>
      Effect.gen(function*() {
        const orgId = yield* repo.orgOfCard(paymentMethodId)
        if (Option.isNone(orgId)) return
        const now = new Date(yield* Clock.currentTimeMillis)
        const profile = yield* repo.lockProfile(orgId.value, now)
        if (profile.card_payment_method_id !== paymentMethodId) return
        yield* repo.updateProfile(orgId.value, {
          card_payment_method_id: null,
          card_brand: null,
          card_last4: null,
          card_exp_month: null,
          card_exp_year: null,
          auto_reload_next_attempt_at: null,
          updated_at: now
        })
      }).pipe(Effect.orDie)

    return { keep, forget } as const
  }),
  dependencies: [BillingRepo.Default]
}) {}
