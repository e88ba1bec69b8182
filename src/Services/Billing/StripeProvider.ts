import { Effect, Layer, Option, Redacted, Schema } from "effect"
import Stripe from "stripe"
import type { DisputeStatus } from "../../Domain/Billing.js"
// Our ids in an object's metadata: none when absent or not ours (another integration's object).
import { idOrNull, OrgId, PaymentId } from "../../Domain/Ids.js"
import { InvalidSignature, PaymentUnavailable } from "../../Errors/ApiErrors.js"
import { ExternalFailure } from "../../Errors/ExternalFailure.js"
import type { StripeSettings } from "./BillingConfig.js"
import {
  PaymentProvider,
  type ProviderCardSetup,
  type ProviderCheckout,
  type ProviderEvent,
  type ProviderPayment
} from "./PaymentProvider.js"
import { Card, cardDetails, cardOf, decodeAnswer, Id, idOf, Method } from "./StripeShapes.js"
import { stripeSubscriptionCalls, subscriptionEvent } from "./StripeSubscriptions.js"

/**
 * The payment provider on Stripe, through the official library. The API version is
 * pinned here (the one the pinned library is written for), so an account's default
 * version never changes what we read. Every creating call carries our idempotency key.
 * Answers are checked against the few fields we use: anything else is
 * `payment_unavailable` (retryable, and nothing was changed on our side).
 */
export const STRIPE_API_VERSION = "2026-10-28.endive" as const

/** Seconds a webhook's signature timestamp may be from our clock (Stripe's default). */
const WEBHOOK_TOLERANCE_SECONDS = 300

const PaymentIntentShape = Schema.Struct({
  id: Schema.String,
  object: Schema.Literal("payment_intent"),
  status: Schema.Literal(
    "requires_payment_method",
    "requires_confirmation",
    "requires_action",
    "processing",
    "requires_capture",
    "canceled",
    "succeeded"
  ),
  amount: Schema.Number,
  currency: Schema.String,
  client_secret: Schema.optional(Schema.NullOr(Schema.String)),
  customer: Schema.optional(Schema.NullOr(Id)),
  payment_method: Schema.optional(Method),
  latest_charge: Schema.optional(
    Schema.NullOr(Schema.Union(
      Schema.String,
      Schema.Struct({
        id: Schema.String,
        receipt_url: Schema.optional(Schema.NullOr(Schema.String)),
        payment_method_details: Schema.optional(
          Schema.NullOr(Schema.Struct({ card: Schema.optional(Schema.NullOr(Card)) }))
        )
      })
    ))
  ),
  last_payment_error: Schema.optional(
    Schema.NullOr(Schema.Struct({
      message: Schema.optional(Schema.NullOr(Schema.String)),
      code: Schema.optional(Schema.NullOr(Schema.String))
    }))
  ),
  metadata: Schema.optional(Schema.NullOr(Schema.Record({ key: Schema.String, value: Schema.String })))
})

const SetupIntentShape = Schema.Struct({
  id: Schema.String,
  object: Schema.Literal("setup_intent"),
  status: Schema.String,
  customer: Schema.optional(Schema.NullOr(Id)),
  payment_method: Schema.optional(Method)
})

const toCardSetup = (raw: unknown) =>
  Effect.map(
    decodeAnswer(SetupIntentShape, "a card setup")(raw),
    (setup): ProviderCardSetup => ({
      succeeded: setup.status === "succeeded",
      customerId: idOf(setup.customer),
      paymentMethodId: idOf(setup.payment_method),
      card: cardOf(setup.payment_method)
    })
  )

const CheckoutSessionShape = Schema.Struct({
  id: Schema.String,
  object: Schema.Literal("checkout.session"),
  mode: Schema.Literal("payment", "setup", "subscription"),
  status: Schema.Literal("open", "complete", "expired"),
  setup_intent: Schema.optional(Schema.NullOr(Id)),
  url: Schema.optional(Schema.NullOr(Schema.String)),
  payment_intent: Schema.optional(Schema.NullOr(Id)),
  subscription: Schema.optional(Schema.NullOr(Id)),
  metadata: Schema.optional(Schema.NullOr(Schema.Record({ key: Schema.String, value: Schema.String })))
})

/** Our view of a Checkout Session, or `payment_unavailable` when it is not shaped like one. */
export const toProviderCheckout = (raw: unknown) =>
  Effect.map(
    decodeAnswer(CheckoutSessionShape, "a checkout")(raw),
    (session): ProviderCheckout => ({
      id: session.id,
      mode: session.mode,
      subscriptionId: idOf(session.subscription),
      status: session.status,
      url: session.status === "open" ? session.url ?? null : null,
      paymentId: idOf(session.payment_intent),
      ourPaymentId: idOrNull(PaymentId, session.metadata?.payment_id),
      setupId: idOf(session.setup_intent),
      orgId: idOrNull(OrgId, session.metadata?.org_id)
    })
  )

/** Our view of a PaymentIntent, or `payment_unavailable` when it is not shaped like one. */
export const toProviderPayment = (raw: unknown) =>
  Effect.map(
    decodeAnswer(PaymentIntentShape, "a payment")(raw),
    (pi): ProviderPayment => {
      const charge = typeof pi.latest_charge === "object" && pi.latest_charge !== null ? pi.latest_charge : null
      return {
        id: pi.id,
        status: pi.status,
        amountMinor: BigInt(Math.round(pi.amount)),
        currency: pi.currency,
        clientSecret: pi.client_secret ?? null,
        customerId: idOf(pi.customer),
        paymentMethodId: idOf(pi.payment_method),
        card: cardDetails(charge?.payment_method_details?.card) ?? cardOf(pi.payment_method),
        receiptUrl: charge?.receipt_url ?? null,
        failureMessage: pi.last_payment_error?.message ?? null,
        needsAuthentication: pi.status === "requires_action" ||
          pi.last_payment_error?.code === "authentication_required",
        ourPaymentId: idOrNull(PaymentId, pi.metadata?.payment_id)
      }
    }
  )

const unavailable = (failure: ExternalFailure) =>
  Effect.zipRight(
    Effect.logWarning(`Payment provider: ${failure.what} failed (${failure.detail})`),
    Effect.fail(
      new PaymentUnavailable({
        message: `The payment provider did not answer as expected (${failure.what}); nothing was changed, retry shortly`
      })
    )
  )

const EXPAND = ["latest_charge", "payment_method"]

/**
 * `kind` labels the answers: `sandbox` when the settings point at the development Stripe
 * emulator (no money moves); the calls are the same.
 */
export const StripeProvider = (settings: StripeSettings, timeoutMs: number, kind: "stripe" | "sandbox" = "stripe") =>
  Layer.sync(PaymentProvider, () => {
    const base = Option.map(settings.apiBase, (address) => new URL(address))
    const stripe = new Stripe(Redacted.value(settings.secretKey), {
      apiVersion: STRIPE_API_VERSION,
      // A retry is ours to make, under the same idempotency key.
      maxNetworkRetries: 0,
      timeout: timeoutMs,
      telemetry: false,
      ...Option.match(base, {
        onNone: () => ({}),
        onSome: (url) => ({
          host: url.hostname,
          port: url.port === "" ? (url.protocol === "https:" ? 443 : 80) : Number(url.port),
          protocol: url.protocol === "http:" ? "http" as const : "https" as const
        })
      })
    })

    /** One library call, bounded in time; any failure is `payment_unavailable`. */
    const call = <A>(what: string, run: () => Promise<A>) =>
      Effect.tryPromise({ try: run, catch: (cause) => new ExternalFailure({ what, cause }) }).pipe(
        Effect.timeoutFail({
          duration: timeoutMs + 1_000,
          onTimeout: () => new ExternalFailure({ what, cause: `no answer within ${timeoutMs} ms` })
        }),
        Effect.catchAll(unavailable)
      )

    const retrievePayment = (id: string) =>
      Effect.flatMap(
        call("retrieving a payment", () => stripe.paymentIntents.retrieve(id, { expand: EXPAND })),
        toProviderPayment
      )

    const retrieveCheckout = (id: string) =>
      Effect.flatMap(call("retrieving a checkout", () => stripe.checkout.sessions.retrieve(id)), toProviderCheckout)

    const createCheckout: PaymentProvider["Type"]["createCheckout"] = (request) =>
      Effect.flatMap(
        call("creating a checkout", () =>
          request.subscription !== null
            ? stripe.checkout.sessions.create({
              mode: "subscription",
              line_items: [{ quantity: 1, price: request.subscription.priceId }],
              ...(request.customerId === null ? {} : { customer: request.customerId }),
              client_reference_id: request.ourPaymentId,
              metadata: { payment_id: request.ourPaymentId, org_id: request.subscription.orgId },
              // The subscription names the org and our payment: its events find both.
              subscription_data: {
                description: request.description,
                metadata: { payment_id: request.ourPaymentId, org_id: request.subscription.orgId }
              },
              success_url: request.successUrl,
              cancel_url: request.cancelUrl
            }, { idempotencyKey: request.idempotencyKey })
            : stripe.checkout.sessions.create({
              mode: "payment",
              line_items: [{
                quantity: 1,
                price_data: {
                  currency: request.currency,
                  unit_amount: Number(request.amountMinor),
                  product_data: { name: request.description }
                }
              }],
              ...(request.customerId === null ? {} : { customer: request.customerId }),
              client_reference_id: request.ourPaymentId,
              metadata: { payment_id: request.ourPaymentId },
              payment_intent_data: {
                description: request.description,
                metadata: { payment_id: request.ourPaymentId },
                ...(request.saveCard ? { setup_future_usage: "off_session" as const } : {})
              },
              success_url: request.successUrl,
              cancel_url: request.cancelUrl
            }, { idempotencyKey: request.idempotencyKey })),
        toProviderCheckout
      )

    // Only an open session can be expired: one that finished meanwhile is read back as it is.
    const expireCheckout = (id: string) =>
      Effect.flatMap(retrieveCheckout(id), (session) =>
        session.status !== "open"
          ? Effect.succeed(session)
          : call("expiring a checkout", () => stripe.checkout.sessions.expire(id)).pipe(
            Effect.flatMap(toProviderCheckout),
            Effect.orElse(() =>
              Effect.filterOrFail(
                retrieveCheckout(id),
                (again) => again.status !== "open",
                () =>
                  new PaymentUnavailable({ message: "The payment provider did not end the checkout; retry shortly" })
              )
            )
          ))

    const chargeOffSession: PaymentProvider["Type"]["chargeOffSession"] = (request) =>
      Effect.tryPromise({
        try: () =>
          stripe.paymentIntents.create({
            amount: Number(request.amountMinor),
            currency: request.currency,
            customer: request.customerId,
            payment_method: request.paymentMethodId,
            off_session: true,
            confirm: true,
            description: request.description,
            metadata: { payment_id: request.ourPaymentId },
            expand: EXPAND
          }, { idempotencyKey: request.idempotencyKey }),
        catch: (cause) => new ExternalFailure({ what: "charging a saved card", cause })
      }).pipe(
        Effect.timeoutFail({
          duration: timeoutMs + 1_000,
          onTimeout: () =>
            new ExternalFailure({ what: "charging a saved card", cause: `no answer within ${timeoutMs} ms` })
        }),
        Effect.flatMap(toProviderPayment),
        // A decline or a card that needs its holder comes back as an error carrying the payment.
        Effect.catchAll((error) => {
          if (error instanceof PaymentUnavailable) return Effect.fail(error)
          const cause = error.cause
          return cause instanceof Stripe.errors.StripeCardError && cause.payment_intent !== undefined
            ? Effect.map(toProviderPayment(cause.payment_intent), (payment) => ({
              ...payment,
              failureMessage: payment.failureMessage ?? cause.message
            }))
            : unavailable(error)
        })
      )

    const verifyWebhook = (rawBody: string, signature: string | undefined) =>
      Effect.gen(function*() {
        if (signature === undefined || signature === "") {
          return yield* new InvalidSignature({ message: "The Stripe-Signature header is missing" })
        }
        const event = yield* Effect.try({
          try: () =>
            stripe.webhooks.constructEvent(
              rawBody,
              signature,
              Redacted.value(settings.webhookSecret),
              WEBHOOK_TOLERANCE_SECONDS
            ),
          catch: () => new InvalidSignature({ message: "The webhook's signature did not verify against its raw body" })
        })
        return yield* toProviderEvent(event.id, event.type, event.data.object as unknown)
      })

    return PaymentProvider.of({
      kind,
      publishableKey: settings.publishableKey,
      createCustomer: (orgId, idempotencyKey) =>
        Effect.map(
          call(
            "creating a customer",
            () =>
              stripe.customers.create({ description: `Org ${orgId}`, metadata: { org_id: orgId } }, { idempotencyKey })
          ),
          (customer) => customer.id
        ),
      createPayment: (request) =>
        Effect.flatMap(
          call("creating a payment", () =>
            stripe.paymentIntents.create({
              amount: Number(request.amountMinor),
              currency: request.currency,
              description: request.description,
              metadata: { payment_id: request.ourPaymentId },
              ...(request.customerId === null ? {} : { customer: request.customerId }),
              ...(request.saveCard ? { setup_future_usage: "off_session" as const } : {})
            }, { idempotencyKey: request.idempotencyKey })),
          toProviderPayment
        ),
      createCheckout,
      retrieveCheckout,
      createCardSetup: (request) =>
        Effect.flatMap(
          call("creating a card setup", () =>
            stripe.checkout.sessions.create({
              mode: "setup",
              currency: "usd",
              customer: request.customerId,
              metadata: { org_id: request.orgId },
              setup_intent_data: { metadata: { org_id: request.orgId } },
              success_url: request.successUrl,
              cancel_url: request.cancelUrl
            }, { idempotencyKey: request.idempotencyKey })),
          toProviderCheckout
        ),
      retrieveCardSetup: (id) =>
        Effect.flatMap(
          call("retrieving a card setup", () => stripe.setupIntents.retrieve(id, { expand: ["payment_method"] })),
          toCardSetup
        ),
      expireCheckout,
      chargeOffSession,
      retrievePayment,
      cancelPayment: (id) =>
        Effect.flatMap(
          retrievePayment(id),
          (payment) =>
            payment.status === "succeeded" || payment.status === "canceled" || payment.status === "processing"
              ? Effect.succeed(payment)
              : Effect.flatMap(
                call("cancelling a payment", () => stripe.paymentIntents.cancel(id)),
                toProviderPayment
              )
        ),
      verifyWebhook,
      ...stripeSubscriptionCalls(stripe, call)
    })
  })

const ChargeShape = Schema.Struct({
  object: Schema.Literal("charge"),
  payment_intent: Schema.NullOr(Schema.String),
  amount_refunded: Schema.Number
})

const PaymentMethodShape = Schema.Struct({ id: Schema.String, object: Schema.Literal("payment_method") })

const DisputeShape = Schema.Struct({
  object: Schema.Literal("dispute"),
  payment_intent: Schema.NullOr(Schema.String),
  amount: Schema.Number,
  status: Schema.String
})

/** A closed dispute's outcome; an inquiry closed without a chargeback (`warning_closed`) took nothing. */
const closedStatus = (status: string): DisputeStatus | undefined =>
  status === "lost" ? "lost" : status === "won" || status === "warning_closed" ? "won" : undefined

/** What a verified event means to billing; an event we do not handle is `ignored`. */
const toProviderEvent = (
  eventId: string,
  type: string,
  object: unknown
): Effect.Effect<ProviderEvent, PaymentUnavailable> => {
  const base = { eventId, type }
  switch (type) {
    case "payment_intent.succeeded":
    case "payment_intent.payment_failed":
    case "payment_intent.canceled":
      return Effect.map(
        toProviderPayment(object),
        (payment) => ({ ...base, kind: "payment_changed" as const, payment })
      )
    case "checkout.session.completed":
    case "checkout.session.expired":
      return Effect.map(toProviderCheckout(object), (session) => ({
        ...base,
        kind: "checkout_changed" as const,
        sessionId: session.id
      }))
    case "charge.refunded":
      return Effect.map(
        Schema.decodeUnknown(ChargeShape)(object).pipe(
          Effect.mapError(() => new PaymentUnavailable({ message: "A charge.refunded event without a charge" }))
        ),
        (charge): ProviderEvent =>
          charge.payment_intent === null
            ? { ...base, kind: "ignored" }
            : {
              ...base,
              kind: "refunded",
              paymentId: charge.payment_intent,
              amountRefundedMinor: BigInt(charge.amount_refunded)
            }
      )
    case "charge.dispute.created":
    case "charge.dispute.closed":
      return Effect.flatMap(
        Schema.decodeUnknown(DisputeShape)(object).pipe(
          Effect.mapError(() => new PaymentUnavailable({ message: `A ${type} event without a dispute` }))
        ),
        (dispute): Effect.Effect<ProviderEvent, PaymentUnavailable> => {
          if (dispute.payment_intent === null) return Effect.succeed({ ...base, kind: "ignored" })
          const status = type === "charge.dispute.created" ? "open" : closedStatus(dispute.status)
          if (status === undefined) {
            return Effect.fail(
              new PaymentUnavailable({ message: `A charge.dispute.closed event with status ${dispute.status}` })
            )
          }
          return Effect.succeed({
            ...base,
            kind: "disputed",
            paymentId: dispute.payment_intent,
            amountMinor: BigInt(dispute.amount),
            status
          })
        }
      )
    case "payment_method.detached":
      return Effect.map(
        Schema.decodeUnknown(PaymentMethodShape)(object).pipe(
          Effect.mapError(() => new PaymentUnavailable({ message: "A payment_method.detached event without a card" }))
        ),
        (method): ProviderEvent => ({ ...base, kind: "card_detached", paymentMethodId: method.id })
      )
    default: {
      const plan = subscriptionEvent(type, object)
      return plan === undefined
        ? Effect.succeed({ ...base, kind: "ignored" as const })
        : Effect.map(plan, (meaning): ProviderEvent => ({ ...base, ...meaning }))
    }
  }
}
