import { Effect } from "effect"
import type { OrgActor } from "../../Domain/Current.js"
import { requireOwner } from "../Auth/Roles.js"
import { PaymentProvider } from "./PaymentProvider.js"
import { type CheckoutReturn, Payments } from "./Payments.js"

/**
 * The payment provider's customer portal for an org's owner: add, replace or remove the
 * card, see invoices and receipts, cancel the plan's subscription. What the owner does
 * there comes back as the provider's events (`customer.subscription.*`, `customer.updated`),
 * applied like any other (PlanSubscriptions.ts); the portal returns to the billing page.
 */
export class BillingPortal extends Effect.Service<BillingPortal>()("Billing/BillingPortal", {
  effect: Effect.gen(function*() {
    const provider = yield* PaymentProvider
    const payments = yield* Payments

    const open = (actor: OrgActor, back: CheckoutReturn) =>
      Effect.gen(function*() {
        yield* payments.requireConfigured
        yield* requireOwner(actor)
        const customerId = yield* payments.customerFor(actor.org_id)
        return yield* provider.createPortal(
          customerId,
          `${back.dashboardUrl}/orgs/${actor.org_id}/billing?portal=returned`
        )
      })

    return { open } as const
  }),
  dependencies: [Payments.Default]
}) {}
