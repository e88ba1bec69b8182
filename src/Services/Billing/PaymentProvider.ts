import { Context, type Effect, Schema } from "effect"
import type { DisputeStatus } from "../../Domain/Billing.js"
import type { OrgId, PaymentId } from "../../Domain/Ids.js"
import type { InvalidSignature, NotConfigured, PaymentUnavailable } from "../../Errors/ApiErrors.js"

/**
 * The payment provider as billing sees it: Stripe (StripeProvider.ts), in development
 * without keys the same code against the Stripe emulator (labelled `sandbox`), or nothing
 * (production without keys: every call answers `not_configured`). Amounts are in the currency's minor unit (cents, paise).
 *
 * Every call that creates something takes our idempotency key and passes it on, so a
 * retry after a lost answer gets the first result instead of a second charge. A provider
 * answer that is not what was expected, or none in time, is `payment_unavailable`.
 */
export interface CardDetails {
  readonly brand: string
  readonly last4: string
  readonly expMonth: number
  readonly expYear: number
}

export const ProviderPaymentStatus = Schema.Literal(
  "requires_payment_method",
  "requires_confirmation",
  "requires_action",
  "processing",
  "requires_capture",
  "canceled",
  "succeeded"
)
export type ProviderPaymentStatus = typeof ProviderPaymentStatus.Type

export interface ProviderPayment {
  readonly id: string
  readonly status: ProviderPaymentStatus
  readonly amountMinor: bigint
  readonly currency: string
  readonly clientSecret: string | null
  readonly customerId: string | null
  readonly paymentMethodId: string | null
  readonly card: CardDetails | null
  readonly receiptUrl: string | null
  /** Why the last attempt failed (a decline, authentication needed). */
  readonly failureMessage: string | null
  /** The card holder must confirm the charge with their bank (3-D Secure): only they can finish it. */
  readonly needsAuthentication?: boolean
  /** Our payment id, set when the payment was created. */
  readonly ourPaymentId: PaymentId | null
}

export interface CreatePayment {
  readonly ourPaymentId: string
  readonly amountMinor: bigint
  readonly currency: "usd" | "inr"
  readonly description: string
  /** Keep the card for later off-session charges (needs `customerId`). */
  readonly saveCard: boolean
  readonly customerId: string | null
  readonly idempotencyKey: string
}

/**
 * A payment the customer makes on the provider's hosted checkout page (one item, `mode:
 * payment`): no card data touches our pages. The page sends the customer back to
 * `successUrl` (where `{CHECKOUT_SESSION_ID}` is replaced by the session's id) or to
 * `cancelUrl`. Our payment id rides on the session and on the provider's payment it makes.
 */
export interface CreateCheckout extends CreatePayment {
  readonly successUrl: string
  readonly cancelUrl: string
  /**
   * A plan: the session starts a subscription to this price (`mode: subscription`, the
   * card kept for its renewals) instead of a one-time payment of the amount.
   */
  readonly subscription: { readonly priceId: string; readonly orgId: string } | null
}

/**
 * A card saved on the provider's hosted page (a checkout session in `mode: setup`), for
 * the org's off-session charges; nothing is charged.
 */
export interface CreateCardSetup {
  readonly orgId: string
  readonly customerId: string
  readonly successUrl: string
  readonly cancelUrl: string
  readonly idempotencyKey: string
}

/** What a card setup left: the saved card once it succeeded. */
export interface ProviderCardSetup {
  readonly succeeded: boolean
  readonly customerId: string | null
  readonly paymentMethodId: string | null
  readonly card: CardDetails | null
}

/** A checkout session: `open` until paid (`complete`) or ended unpaid (`expired`). */
export interface ProviderCheckout {
  readonly id: string
  /** `payment` buys credits; `setup` saves a card; `subscription` starts a plan. */
  readonly mode: "payment" | "setup" | "subscription"
  /** The subscription a plan's session started, once the customer paid. */
  readonly subscriptionId: string | null
  readonly status: "open" | "complete" | "expired"
  /** The hosted page, while the session is open. */
  readonly url: string | null
  /** The provider's payment, once the customer tried to pay. */
  readonly paymentId: string | null
  readonly ourPaymentId: PaymentId | null
  /** A card setup's card, once the customer gave one. */
  readonly setupId: string | null
  /** The org a card setup is for. */
  readonly orgId: OrgId | null
}

/** A plan's recurring price, found by its lookup key (made when missing) or named by a setting. */
export interface PlanPriceSpec {
  readonly lookupKey: string
  readonly productName: string
  readonly amountMinor: bigint
  /** A price id from the settings: used as it is. */
  readonly configuredId: string | null
}

/**
 * A subscription as billing reads it. `active`, `trialing` and `past_due` (the provider is
 * retrying a renewal) keep the plan; `unpaid`, `canceled` and `incomplete_expired` end it.
 */
export interface ProviderSubscription {
  readonly id: string
  readonly status: string
  readonly customerId: string
  readonly priceId: string | null
  /** The org and our checkout payment, from the metadata the checkout gave it. */
  readonly orgId: OrgId | null
  readonly ourPaymentId: PaymentId | null
  readonly currentPeriodEnd: Date | null
  /** Why it ended: the renewals could not be charged, or someone cancelled it. */
  readonly endedBecause: "payment_failed" | "cancellation_requested" | null
  readonly paymentMethodId: string | null
  readonly card: CardDetails | null
  readonly latestInvoiceId: string | null
}

/** An invoice of a subscription: its first month, a renewal, or a prorated plan change. */
export interface ProviderInvoice {
  readonly id: string
  readonly status: string
  readonly subscriptionId: string | null
  readonly billingReason: string | null
  readonly amountDueMinor: bigint
  readonly currency: string
  readonly attempted: boolean
  readonly receiptUrl: string | null
  readonly failureMessage: string | null
}

export interface OffSessionCharge {
  readonly ourPaymentId: string
  readonly amountMinor: bigint
  readonly currency: "usd"
  readonly description: string
  readonly customerId: string
  readonly paymentMethodId: string
  readonly idempotencyKey: string
}

/** What a verified webhook event means to billing. */
export type ProviderEvent =
  & { readonly eventId: string; readonly type: string }
  & (
    | { readonly kind: "payment_changed"; readonly payment: ProviderPayment }
    | { readonly kind: "checkout_changed"; readonly sessionId: string }
    | { readonly kind: "subscription_changed"; readonly subscriptionId: string }
    | { readonly kind: "invoice_changed"; readonly invoiceId: string; readonly subscriptionId: string }
    | { readonly kind: "customer_changed"; readonly customerId: string }
    /** A saved card removed at the provider (`payment_method.detached`). */
    | { readonly kind: "card_detached"; readonly paymentMethodId: string }
    | { readonly kind: "refunded"; readonly paymentId: string; readonly amountRefundedMinor: bigint }
    | {
      readonly kind: "disputed"
      readonly paymentId: string
      readonly amountMinor: bigint
      /** `open` when it was created; `won` or `lost` when it closed. */
      readonly status: DisputeStatus
    }
    | { readonly kind: "ignored" }
  )

export type ProviderError = PaymentUnavailable | NotConfigured

export class PaymentProvider extends Context.Tag("Billing/PaymentProvider")<PaymentProvider, {
  readonly kind: "stripe" | "sandbox" | "off"
  /** What a browser needs to confirm a payment (Stripe.js). */
  readonly publishableKey: string | null
  readonly createCustomer: (orgId: string, idempotencyKey: string) => Effect.Effect<string, ProviderError>
  readonly createPayment: (request: CreatePayment) => Effect.Effect<ProviderPayment, ProviderError>
  readonly createCheckout: (request: CreateCheckout) => Effect.Effect<ProviderCheckout, ProviderError>
  readonly retrieveCheckout: (sessionId: string) => Effect.Effect<ProviderCheckout, ProviderError>
  readonly createCardSetup: (request: CreateCardSetup) => Effect.Effect<ProviderCheckout, ProviderError>
  readonly retrieveCardSetup: (setupId: string) => Effect.Effect<ProviderCardSetup, ProviderError>
  /** Ends an open session unpaid (its payment, if any, is cancelled); a finished one comes back unchanged. */
  readonly expireCheckout: (sessionId: string) => Effect.Effect<ProviderCheckout, ProviderError>
  /** Charges a saved card without the customer; a decline comes back as a payment that did not succeed. */
  readonly chargeOffSession: (request: OffSessionCharge) => Effect.Effect<ProviderPayment, ProviderError>
  readonly retrievePayment: (providerPaymentId: string) => Effect.Effect<ProviderPayment, ProviderError>
  /** Cancels an unpaid payment; one that already succeeded comes back unchanged. */
  readonly cancelPayment: (providerPaymentId: string) => Effect.Effect<ProviderPayment, ProviderError>
  readonly planPrice: (spec: PlanPriceSpec) => Effect.Effect<string, ProviderError>
  readonly retrieveSubscription: (subscriptionId: string) => Effect.Effect<ProviderSubscription, ProviderError>
  /** Moves a subscription to another price; the difference for the rest of the period is invoiced at once. */
  readonly changeSubscriptionPrice: (request: {
    readonly subscriptionId: string
    readonly priceId: string
    readonly idempotencyKey: string
  }) => Effect.Effect<ProviderSubscription, ProviderError>
  /** Ends a subscription now; one already ended comes back unchanged. */
  readonly cancelSubscription: (subscriptionId: string) => Effect.Effect<ProviderSubscription, ProviderError>
  readonly retrieveInvoice: (invoiceId: string) => Effect.Effect<ProviderInvoice, ProviderError>
  /** The provider's customer portal (card, invoices, cancelling), returning to `returnUrl`; answers its address. */
  readonly createPortal: (customerId: string, returnUrl: string) => Effect.Effect<string, ProviderError>
  /** The customer's default card (set in the portal), as a card setup. */
  readonly retrieveDefaultCard: (customerId: string) => Effect.Effect<ProviderCardSetup, ProviderError>
  /** Checks the signature against the raw body before anything is parsed. */
  readonly verifyWebhook: (
    rawBody: string,
    signature: string | undefined
  ) => Effect.Effect<ProviderEvent, InvalidSignature | ProviderError>
}>() {}
