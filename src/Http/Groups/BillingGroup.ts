import { HttpApiEndpoint, HttpApiGroup, OpenApi } from "@effect/platform"
import { Schema } from "effect"
import { Amount } from "../../Domain/Money.js"
import { PaymentJson } from "../../Domain/Payment.js"
import { PlanId } from "../../Domain/Plans.js"
import {
  Conflict,
  FxUnavailable,
  IdempotencyConflict,
  InvalidAmount,
  InvalidSignature,
  NoSavedCard,
  NotConfigured,
  OfferUnavailable,
  PaymentUnavailable,
  RequestInProgress,
  TopupCap
} from "../../Errors/ApiErrors.js"
import { Forbidden, NotFound } from "../../Errors/ApiErrors.js"
import { wire } from "../../Errors/Wire.js"
import { AdminAuth, OrgAuth } from "../Security/AuthTags.js"
import { OrgPath } from "./IdentitySchemas.js"
import { pageLimitOrDefault } from "./Pagination.js"
import { OrgIdParam, PaymentIdParam } from "./PathIds.js"

/**
 * Billing: owners buy credits by card (USD or INR), keep a card for auto-reload, move
 * between plans; members read the summary and the payments. Also the payment provider's
 * webhook, the development sandbox's card form, and the administrators' unfreeze.
 */
export const ProviderLabel = Schema.Struct({
  name: Schema.Literal("stripe", "sandbox"),
  sandbox: Schema.Boolean,
  publishable_key: Schema.NullOr(Schema.String),
  notice: Schema.NullOr(Schema.String)
}).annotations({
  identifier: "PaymentProviderLabel",
  description: "Which payment provider answers; a sandbox moves no money."
})

export const AutoReloadSettings = Schema.Struct({
  enabled: Schema.Boolean,
  threshold: Schema.NullOr(Amount),
  amount: Schema.NullOr(Amount),
  monthly_limit: Schema.NullOr(Amount),
  used_this_month: Amount,
  failures_in_a_row: Schema.Int,
  disabled_reason: Schema.NullOr(Schema.String),
  currency: Schema.Literal("usd"),
  note: Schema.String
}).annotations({ identifier: "AutoReload" })

export const BillingSummary = Schema.Struct({
  provider: ProviderLabel,
  balance: Amount,
  credits_frozen: Schema.Boolean,
  funded: Schema.Boolean,
  trial: Schema.NullOr(Schema.Struct({ credits: Amount, expires_at: Schema.String, expired: Schema.Boolean })),
  plan: Schema.Struct({
    id: PlanId,
    name: Schema.String,
    monthly_fee_usd: Schema.String,
    founding_offer: Schema.NullOr(Schema.String),
    founding_offer_claim: Schema.NullOr(Schema.Literal("under_way", "used")).annotations({
      description:
        "The org's claim on the founding offer, which is once per org: used (taken, even if the subscription ended since) or under_way (its checkout not paid yet); choosing the offer again answers 409 offer_unavailable. Null: the org may take it while seats are left"
    }),
    renews_at: Schema.NullOr(Schema.String)
  }),
  card: Schema.NullOr(Schema.Struct({
    brand: Schema.String,
    last4: Schema.String,
    exp_month: Schema.NullOr(Schema.Int),
    exp_year: Schema.NullOr(Schema.Int)
  })),
  auto_reload: AutoReloadSettings,
  topup_cap: Schema.Struct({
    applies: Schema.Boolean,
    limit: Amount,
    used: Amount,
    remaining: Schema.NullOr(Amount),
    ends_at: Schema.String
  }),
  top_up_limits: Schema.Struct({ min: Amount, max: Amount, currencies: Schema.Array(Schema.Literal("usd", "inr")) }),
  fx: Schema.Struct({
    status: Schema.Literal("available", "unavailable"),
    source: Schema.Literal("ECB"),
    inr_per_usd: Schema.NullOr(Schema.String),
    rate_date: Schema.NullOr(Schema.String),
    fetched_at: Schema.NullOr(Schema.String)
  })
}).annotations({ identifier: "BillingSummary" })

/** What a client needs to pay a payment: the client secret for Stripe.js (or the sandbox form). */
export const StartedPayment = Schema.Struct({
  payment: PaymentJson,
  client_secret: Schema.NullOr(Schema.String),
  checkout_url: Schema.NullOr(Schema.String).annotations({
    description: "The provider's hosted checkout page to send the owner to (checkout top-ups, while open)"
  }),
  provider: ProviderLabel,
  next_step: Schema.String
}).annotations({ identifier: "StartedPayment" })

/** An amount as sent: checked by the service, so anything else answers `invalid_amount` rather than a schema error. */
const AmountInput = (description: string) =>
  Schema.Unknown.annotations({
    jsonSchema: { anyOf: [{ type: "integer" }, { type: "number" }, { type: "string" }], description }
  })

const PaymentPath = Schema.Struct({ orgId: OrgIdParam, paymentId: PaymentIdParam })

const IdempotencyKey = Schema.optional(Schema.String).annotations({
  description: "Same key and request: the same payment again; another request: 409 idempotency_conflict"
})

const TopUpPayload = Schema.Struct({
  credits: Schema.optional(AmountInput("Whole credits, a multiple of 10 (one cent)")),
  amount_usd: Schema.optional(AmountInput("USD with at most two decimals")),
  currency: Schema.optional(Schema.Literal("usd", "inr")),
  save_card: Schema.optional(Schema.Boolean),
  idempotency_key: IdempotencyKey
})

/** Buying credits, by API or on the checkout page: the same request, answer and refusals. */
const buyingCredits = <Name extends string>(endpoint: HttpApiEndpoint.HttpApiEndpoint<Name, "POST">) =>
  endpoint
    .setPath(OrgPath)
    .setPayload(TopUpPayload)
    .addSuccess(StartedPayment, { status: 201 })
    .addError(wire(Forbidden))
    .addError(wire(InvalidAmount))
    .addError(wire(TopupCap))
    .addError(wire(FxUnavailable))
    .addError(wire(IdempotencyConflict))
    .addError(wire(RequestInProgress))
    .addError(wire(PaymentUnavailable))
    .addError(wire(NotConfigured))

export class BillingGroup extends HttpApiGroup.make("billing")
  .add(
    HttpApiEndpoint.get("summary", "/v1/orgs/:orgId/billing")
      .setPath(OrgPath)
      .addSuccess(BillingSummary)
      .annotateContext(
        OpenApi.annotations({
          summary: "Billing summary",
          description:
            "Members: balance, trial, plan and renewal, saved card, auto-reload, the new-account cap, the INR rate."
        })
      )
  )
  .add(
    HttpApiEndpoint.get("payments", "/v1/orgs/:orgId/billing/payments")
      .setPath(OrgPath)
      .setUrlParams(Schema.Struct({
        limit: pageLimitOrDefault,
        starting_after: Schema.optional(Schema.String)
      }))
      .addSuccess(
        Schema.Struct({ payments: Schema.Array(PaymentJson), has_more: Schema.Boolean, provider: ProviderLabel })
      )
      .annotateContext(
        OpenApi.annotations({ summary: "List payments", description: "Members: the org's payments, newest first." })
      )
  )
  .add(
    HttpApiEndpoint.get("payment", "/v1/orgs/:orgId/billing/payments/:paymentId")
      .annotateContext(
        OpenApi.annotations({
          summary: "Get a payment",
          description: "One payment with its state and the credits it brought."
        })
      )
      .setPath(PaymentPath)
      .addSuccess(Schema.Struct({ payment: PaymentJson, provider: ProviderLabel }))
  )
  .add(
    buyingCredits(HttpApiEndpoint.post("topUp", "/v1/orgs/:orgId/billing/top-ups"))
      .annotateContext(
        OpenApi.annotations({
          summary: "Top up credits",
          description:
            "Owners: buy credits with a card (USD, or INR at the ECB rate). Confirm the answer's client_secret with Stripe.js (or the sandbox), then POST .../confirm; credits land once, whichever of the webhook and the confirmation comes first."
        })
      )
  )
  .add(
    buyingCredits(HttpApiEndpoint.post("checkout", "/v1/orgs/:orgId/billing/checkout"))
      .annotateContext(OpenApi.annotations({
        summary: "Buy credits on the checkout page",
        description:
          "Owners: buy credits on the payment provider's hosted checkout page (the dashboard's Buy credits). Send the owner to checkout_url; the page returns to the billing page, which POSTs .../confirm for the payment's state. Same amounts, cap and idempotency keys as top-ups; an unpaid checkout that expires or is cancelled gives back its cap allowance."
      }))
  )
  .add(
    HttpApiEndpoint.post("cancel", "/v1/orgs/:orgId/billing/payments/:paymentId/cancel")
      .setPath(PaymentPath)
      .addSuccess(Schema.Struct({ payment: PaymentJson, provider: ProviderLabel }))
      .addError(wire(Forbidden))
      .addError(wire(PaymentUnavailable))
      .addError(wire(NotConfigured))
      .annotateContext(
        OpenApi.annotations({
          summary: "Cancel an unpaid payment",
          description:
            "Owners: end a payment that was not paid (the owner left the checkout page); its cap allowance comes back. One paid meanwhile is credited instead."
        })
      )
  )
  .add(
    HttpApiEndpoint.post("confirm", "/v1/orgs/:orgId/billing/payments/:paymentId/confirm")
      .setPath(PaymentPath)
      .addSuccess(Schema.Struct({ payment: PaymentJson, provider: ProviderLabel }))
      .addError(wire(PaymentUnavailable))
      .addError(wire(NotConfigured))
      .annotateContext(
        OpenApi.annotations({
          summary: "Confirm a payment",
          description:
            "The client came back from paying: the payment's state is read from the provider and applied once."
        })
      )
  )
  .add(
    HttpApiEndpoint.get("autoReload", "/v1/orgs/:orgId/billing/auto-reload")
      .annotateContext(
        OpenApi.annotations({
          summary: "Auto-reload settings",
          description: "Whether the saved card is charged when the balance runs low."
        })
      )
      .setPath(OrgPath)
      .addSuccess(Schema.Struct({ auto_reload: AutoReloadSettings, provider: ProviderLabel }))
  )
  .add(
    HttpApiEndpoint.put("setAutoReload", "/v1/orgs/:orgId/billing/auto-reload")
      .setPath(OrgPath)
      .setPayload(Schema.Struct({
        enabled: Schema.Boolean,
        threshold_credits: Schema.optional(AmountInput("Reload when the balance is under this many credits")),
        amount_credits: Schema.optional(AmountInput("Credits to buy each time, a multiple of 10 (one cent)")),
        monthly_limit_credits: Schema.optional(
          AmountInput("At most this many credits of auto-reload a calendar month (UTC)")
        )
      }))
      .addSuccess(Schema.Struct({ auto_reload: AutoReloadSettings, provider: ProviderLabel }))
      .addError(wire(Forbidden))
      .addError(wire(InvalidAmount))
      .addError(wire(NoSavedCard))
      .addError(wire(NotConfigured))
      .annotateContext(
        OpenApi.annotations({
          summary: "Change auto-reload",
          description:
            "Owners: charge the saved card (USD) for amount_credits when the balance is under threshold_credits."
        })
      )
  )
  .add(
    HttpApiEndpoint.post("cardSetup", "/v1/orgs/:orgId/billing/card/setup")
      .setPath(OrgPath)
      .addSuccess(Schema.Struct({ checkout_url: Schema.NullOr(Schema.String), provider: ProviderLabel }), {
        status: 201
      })
      .addError(wire(Forbidden))
      .addError(wire(PaymentUnavailable))
      .addError(wire(NotConfigured))
      .annotateContext(
        OpenApi.annotations({
          summary: "Save a card on the checkout page",
          description:
            "Owners: add or replace the saved card on the payment provider's hosted page (nothing is charged). Send the owner to checkout_url; the page returns to the billing page, which POSTs .../card/setup/confirm."
        })
      )
  )
  .add(
    HttpApiEndpoint.post("cardSetupConfirm", "/v1/orgs/:orgId/billing/card/setup/confirm")
      .setPath(OrgPath)
      .addSuccess(Schema.Struct({
        status: Schema.Literal("saved", "open", "expired", "none"),
        card: BillingSummary.fields.card,
        provider: ProviderLabel
      }))
      .addError(wire(PaymentUnavailable))
      .addError(wire(NotConfigured))
      .annotateContext(
        OpenApi.annotations({
          summary: "Finish saving a card",
          description:
            "The owner came back from saving a card: the org's last card setup is read from the provider and its card kept."
        })
      )
  )
  .add(
    HttpApiEndpoint.del("removeCard", "/v1/orgs/:orgId/billing/card")
      .setPath(OrgPath)
      .addSuccess(Schema.Struct({ status: Schema.Literal("removed"), provider: ProviderLabel }))
      .addError(wire(Forbidden))
      .addError(wire(NotConfigured))
      .annotateContext(
        OpenApi.annotations({
          summary: "Forget the saved card",
          description: "Owners: forget the saved card; auto-reload switches off and a paid plan ends at renewal."
        })
      )
  )
  .add(
    HttpApiEndpoint.post("changePlan", "/v1/orgs/:orgId/billing/plan")
      .setPath(OrgPath)
      .setPayload(Schema.Struct({
        plan: PlanId,
        offer: Schema.optional(Schema.NullOr(Schema.String)),
        idempotency_key: IdempotencyKey
      }))
      .addSuccess(Schema.Struct({
        plan: PlanId,
        payment: Schema.NullOr(PaymentJson),
        client_secret: Schema.NullOr(Schema.String),
        checkout_url: Schema.NullOr(Schema.String).annotations({
          description: "The provider's hosted checkout page where the owner subscribes (while open)"
        }),
        provider: ProviderLabel,
        next_step: Schema.String
      }))
      .addError(wire(Forbidden))
      .addError(wire(Conflict))
      .addError(wire(OfferUnavailable))
      .addError(wire(IdempotencyConflict))
      .addError(wire(RequestInProgress))
      .addError(wire(PaymentUnavailable))
      .addError(wire(NotConfigured))
      .annotateContext(
        OpenApi.annotations({
          summary: "Change plan",
          description:
            "Owners: Pay as you go takes effect at once (the subscription ends). From Pay as you go, Pro or Max (offer: founding-pro for the founding fee) answers a checkout_url where the owner subscribes; the plan changes when the first month is paid. Between Pro and Max the subscription moves at once, the difference for the rest of the month charged (prorated)."
        })
      )
  )
  .add(
    HttpApiEndpoint.post("portal", "/v1/orgs/:orgId/billing/portal")
      .setPath(OrgPath)
      .addSuccess(Schema.Struct({ portal_url: Schema.String, provider: ProviderLabel }), { status: 201 })
      .addError(wire(Forbidden))
      .addError(wire(PaymentUnavailable))
      .addError(wire(NotConfigured))
      .annotateContext(
        OpenApi.annotations({
          summary: "Open the customer portal",
          description:
            "Owners: the payment provider's customer portal (add, replace or remove the card, invoices and receipts, cancel the plan). Send the owner to portal_url; it returns to the billing page."
        })
      )
  )
  .addError(wire(NotFound))
  .addError(wire(NotConfigured))
  .middleware(OrgAuth)
  .annotateContext(OpenApi.annotations({
    title: "Billing",
    description:
      "A member's session, or an org key of this org (read keys: GET only); paying and settings are for owners."
  }))
{}

export class PaymentWebhookGroup extends HttpApiGroup.make("paymentWebhook")
  .add(
    HttpApiEndpoint.post("receive", "/v1/billing/webhook")
      .addSuccess(Schema.Struct({ received: Schema.Boolean, handled: Schema.Boolean, duplicate: Schema.Boolean }))
      .addError(wire(InvalidSignature))
      .addError(wire(PaymentUnavailable))
      .addError(wire(NotConfigured))
      .annotateContext(OpenApi.annotations({
        summary: "Payment provider events",
        description:
          "The payment provider's events (Stripe): the raw body signed in the Stripe-Signature header. Events handled: checkout.session.completed, checkout.session.expired, customer.subscription.created, customer.subscription.updated, customer.subscription.deleted, invoice.paid, invoice.payment_failed, customer.updated, payment_method.detached, payment_intent.succeeded, payment_intent.payment_failed, payment_intent.canceled, charge.refunded, charge.dispute.created, charge.dispute.closed."
      }))
  )
  .annotateContext(OpenApi.annotations({ title: "Payment webhook", description: "Signed by the payment provider." }))
{}

export class SandboxPaymentsGroup extends HttpApiGroup.make("sandboxPayments")
  .add(
    HttpApiEndpoint.post("confirm", "/v1/billing/sandbox/confirm")
      .setPayload(Schema.Struct({ client_secret: Schema.String, card_number: Schema.String }))
      .addSuccess(Schema.Struct({ payment: PaymentJson, provider: ProviderLabel }))
      .addError(wire(NotFound))
      .addError(wire(NotConfigured))
      .annotateContext(
        OpenApi.annotations({
          summary: "Pay in the sandbox",
          description:
            "Development sandbox only (no money moves): pays a payment's client_secret with a test card, as Stripe.js would. 4242424242424242 succeeds; 4000000000000002 is declined."
        })
      )
  )
  .annotateContext(
    OpenApi.annotations({
      title: "Payment sandbox",
      description: "Development only; the client secret is the credential."
    })
  )
{}

export class AdminBillingGroup extends HttpApiGroup.make("adminBilling")
  .add(
    HttpApiEndpoint.post("unfreeze", "/admin/orgs/:orgId/credits/unfreeze")
      .setPath(OrgPath)
      .addSuccess(Schema.Struct({ org_id: Schema.String, credits_frozen: Schema.Literal(false) }))
      .addError(wire(NotFound))
      .annotateContext(
        OpenApi.annotations({
          summary: "Unfreeze an org's credits",
          description: "Unfreezes an org's credits frozen by a chargeback."
        })
      )
  )
  .middleware(AdminAuth)
  .annotateContext(
    OpenApi.annotations({ title: "Administrators: billing", description: "An administrator's session." })
  )
{}
