import { Effect, Schema } from "effect"
import type Stripe from "stripe"
// Our ids in an object's metadata: none when absent or not ours (another integration's object).
import { idOrNull, OrgId, PaymentId } from "../../Domain/Ids.js"
import { PaymentUnavailable } from "../../Errors/ApiErrors.js"
import type { PaymentProvider, ProviderCardSetup, ProviderInvoice, ProviderSubscription } from "./PaymentProvider.js"
import { cardOf, decodeAnswer, Id, idOf, Method } from "./StripeShapes.js"

/**
 * Plans on Stripe Billing: the plan prices (found by lookup key, made when missing),
 * subscriptions, their invoices, and the customer portal. Stripe renews, retries failed
 * renewals and prorates plan changes; billing only reads what it decided (StripeProvider.ts
 * holds the library client and the rules of every call).
 */
type Call = <A>(what: string, run: () => Promise<A>) => Effect.Effect<A, PaymentUnavailable>

const SubscriptionShape = Schema.Struct({
  id: Schema.String,
  object: Schema.Literal("subscription"),
  status: Schema.String,
  customer: Id,
  // Since API version 2025-03-31 the period lives on the subscription's items.
  items: Schema.Struct({
    data: Schema.Array(Schema.Struct({
      price: Schema.Struct({ id: Schema.String }),
      current_period_end: Schema.optional(Schema.Number)
    }))
  }),
  cancellation_details: Schema.optional(
    Schema.NullOr(Schema.Struct({ reason: Schema.optional(Schema.NullOr(Schema.String)) }))
  ),
  default_payment_method: Schema.optional(Method),
  latest_invoice: Schema.optional(Schema.NullOr(Id)),
  metadata: Schema.optional(Schema.NullOr(Schema.Record({ key: Schema.String, value: Schema.String })))
})

export const toProviderSubscription = (raw: unknown) =>
  Effect.map(
    decodeAnswer(SubscriptionShape, "a subscription")(raw),
    (sub): ProviderSubscription => {
      const item = sub.items.data[0]
      const reason = sub.cancellation_details?.reason
      return {
        id: sub.id,
        status: sub.status,
        customerId: idOf(sub.customer)!,
        priceId: item?.price.id ?? null,
        orgId: idOrNull(OrgId, sub.metadata?.org_id),
        ourPaymentId: idOrNull(PaymentId, sub.metadata?.payment_id),
        currentPeriodEnd: item?.current_period_end === undefined ? null : new Date(item.current_period_end * 1000),
        endedBecause: reason === "payment_failed" || reason === "cancellation_requested" ? reason : null,
        paymentMethodId: idOf(sub.default_payment_method),
        card: cardOf(sub.default_payment_method),
        latestInvoiceId: idOf(sub.latest_invoice)
      }
    }
  )

const InvoiceShape = Schema.Struct({
  id: Schema.String,
  object: Schema.Literal("invoice"),
  status: Schema.NullOr(Schema.String),
  billing_reason: Schema.optional(Schema.NullOr(Schema.String)),
  amount_due: Schema.Number,
  currency: Schema.String,
  attempted: Schema.optional(Schema.Boolean),
  hosted_invoice_url: Schema.optional(Schema.NullOr(Schema.String)),
  last_finalization_error: Schema.optional(Schema.NullOr(Schema.Struct({ message: Schema.optional(Schema.String) }))),
  // Since API version 2025-03-31 an invoice names its subscription under `parent`.
  parent: Schema.optional(Schema.NullOr(Schema.Struct({
    subscription_details: Schema.optional(Schema.NullOr(Schema.Struct({ subscription: Id })))
  })))
})

export const toProviderInvoice = (raw: unknown) =>
  Effect.map(
    decodeAnswer(InvoiceShape, "an invoice")(raw),
    (invoice): ProviderInvoice => ({
      id: invoice.id,
      status: invoice.status ?? "draft",
      subscriptionId: idOf(invoice.parent?.subscription_details?.subscription),
      billingReason: invoice.billing_reason ?? null,
      amountDueMinor: BigInt(invoice.amount_due),
      currency: invoice.currency,
      attempted: invoice.attempted ?? false,
      receiptUrl: invoice.hosted_invoice_url ?? null,
      failureMessage: invoice.status === "paid" || invoice.attempted !== true
        ? null
        : invoice.last_finalization_error?.message ?? "The card could not be charged"
    })
  )

const CustomerShape = Schema.Struct({
  id: Schema.String,
  object: Schema.Literal("customer"),
  invoice_settings: Schema.optional(Schema.NullOr(Schema.Struct({ default_payment_method: Schema.optional(Method) })))
})

/** The subscription calls of the Stripe provider, over its client and call rules. */
export const stripeSubscriptionCalls = (stripe: Stripe, call: Call) => {
  const retrieveSubscription = (id: string) =>
    Effect.flatMap(
      call(
        "retrieving a subscription",
        () => stripe.subscriptions.retrieve(id, { expand: ["default_payment_method"] })
      ),
      toProviderSubscription
    )

  const planPrice: PaymentProvider["Type"]["planPrice"] = (spec) =>
    Effect.gen(function*() {
      if (spec.configuredId !== null) return spec.configuredId
      const found = yield* call("finding a plan price", () =>
        stripe.prices.list({ lookup_keys: [spec.lookupKey], active: true, limit: 1 }))
      const existing = found.data[0]
      if (existing !== undefined) {
        if (existing.unit_amount !== Number(spec.amountMinor)) {
          yield* Effect.logWarning(
            `Stripe price ${existing.id} (${spec.lookupKey}) charges ${existing.unit_amount}, the plan says ${spec.amountMinor}`
          )
        }
        return existing.id
      }
      // Made once: the idempotency keys name the lookup key, so two replicas starting together make one.
      const product = yield* call("creating a plan product", () =>
        stripe.products.create(
          { name: spec.productName, metadata: { lookup_key: spec.lookupKey } },
          { idempotencyKey: `plan-product:${spec.lookupKey}` }
        ))
      const price = yield* call("creating a plan price", () =>
        stripe.prices.create({
          product: product.id,
          currency: "usd",
          unit_amount: Number(spec.amountMinor),
          recurring: { interval: "month" },
          lookup_key: spec.lookupKey,
          nickname: spec.productName
        }, { idempotencyKey: `plan-price:${spec.lookupKey}:${spec.amountMinor}` }))
      return price.id
    })

  const changeSubscriptionPrice: PaymentProvider["Type"]["changeSubscriptionPrice"] = (request) =>
    Effect.gen(function*() {
      const current = yield* call(
        "retrieving a subscription",
        () => stripe.subscriptions.retrieve(request.subscriptionId)
      )
      const item = current.items.data[0]
      if (item === undefined) {
        return yield* new PaymentUnavailable({ message: "The subscription has no price to change" })
      }
      const updated = yield* call("changing a subscription", () =>
        stripe.subscriptions.update(request.subscriptionId, {
          items: [{ id: item.id, price: request.priceId }],
          // The difference for the rest of the month is invoiced and charged now.
          proration_behavior: "always_invoice",
          expand: ["default_payment_method"]
        }, { idempotencyKey: request.idempotencyKey }))
      return yield* toProviderSubscription(updated)
    })

  const cancelSubscription = (id: string) =>
    Effect.flatMap(retrieveSubscription(id), (sub) =>
      sub.status === "canceled" || sub.status === "incomplete_expired"
        ? Effect.succeed(sub)
        : Effect.flatMap(
          call("cancelling a subscription", () =>
            stripe.subscriptions.cancel(id, {
              cancellation_details: { comment: "Moved to Pay as you go" },
              expand: ["default_payment_method"]
            })),
          toProviderSubscription
        ))

  const retrieveInvoice = (id: string) =>
    Effect.flatMap(call("retrieving an invoice", () => stripe.invoices.retrieve(id)), toProviderInvoice)

  const createPortal = (customerId: string, returnUrl: string) =>
    Effect.map(
      call("opening the customer portal", () =>
        stripe.billingPortal.sessions.create({ customer: customerId, return_url: returnUrl })),
      (session) =>
        session.url
    )

  const retrieveDefaultCard = (customerId: string) =>
    Effect.gen(function*() {
      const raw = yield* call("retrieving a customer", () =>
        stripe.customers.retrieve(customerId, { expand: ["invoice_settings.default_payment_method"] }))
      const customer = yield* decodeAnswer(CustomerShape, "a customer")(raw)
      const method = customer.invoice_settings?.default_payment_method
      return {
        succeeded: idOf(method) !== null,
        customerId: customer.id,
        paymentMethodId: idOf(method),
        card: cardOf(method)
      } satisfies ProviderCardSetup
    })

  return {
    planPrice,
    retrieveSubscription,
    changeSubscriptionPrice,
    cancelSubscription,
    retrieveInvoice,
    createPortal,
    retrieveDefaultCard
  } as const
}

const InvoiceEventShape = Schema.Struct({
  id: Schema.String,
  object: Schema.Literal("invoice"),
  ...InvoiceShape.pick("parent").fields
})

type PlanEventMeaning =
  | { readonly kind: "subscription_changed"; readonly subscriptionId: string }
  | { readonly kind: "invoice_changed"; readonly invoiceId: string; readonly subscriptionId: string }
  | { readonly kind: "customer_changed"; readonly customerId: string }
  | { readonly kind: "ignored" }

/** What a subscription, invoice or customer event names; undefined for any other event. */
export const subscriptionEvent = (
  type: string,
  object: unknown
): Effect.Effect<PlanEventMeaning, PaymentUnavailable> | undefined => {
  switch (type) {
    case "customer.subscription.created":
    case "customer.subscription.updated":
    case "customer.subscription.deleted":
      return Effect.map(toProviderSubscription(object), (sub) => ({
        kind: "subscription_changed" as const,
        subscriptionId: sub.id
      }))
    case "invoice.paid":
    case "invoice.payment_failed":
      return Effect.map(
        Schema.decodeUnknown(InvoiceEventShape)(object).pipe(
          Effect.mapError(() => new PaymentUnavailable({ message: `A ${type} event without an invoice` }))
        ),
        (invoice): PlanEventMeaning => {
          const subscriptionId = idOf(invoice.parent?.subscription_details?.subscription)
          // An invoice outside a subscription is not a plan's.
          return subscriptionId === null
            ? { kind: "ignored" }
            : { kind: "invoice_changed", invoiceId: invoice.id, subscriptionId }
        }
      )
    case "customer.updated":
      return Effect.map(
        Schema.decodeUnknown(CustomerShape)(object).pipe(
          Effect.mapError(() => new PaymentUnavailable({ message: "A customer.updated event without a customer" }))
        ),
        (customer) => ({ kind: "customer_changed" as const, customerId: customer.id })
      )
    default:
      return undefined
  }
}
