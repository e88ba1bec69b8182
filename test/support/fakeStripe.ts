import { randomBytes } from "node:crypto"
import * as http from "node:http"
import Stripe from "stripe"
import { STRIPE_API_VERSION } from "../../src/Services/Billing/StripeProvider.js"
import { asList, fakeBilling } from "./fakeStripeBilling.js"

/**
 * A fake Stripe API on loopback: the handful of endpoints the service uses, answering
 * with Stripe's own object shapes (PaymentIntent, Charge, Customer, Dispute, Event), with
 * Stripe's idempotency keys (the same key answers the first response again) and Stripe's
 * test payment methods (`pm_card_visa`, `pm_card_chargeDeclined`,
 * `pm_card_chargeDeclinedInsufficientFunds`, `pm_card_authenticationRequired`). The service reaches it through the official library
 * (STRIPE_API_BASE); tests play the browser with the same library and a publishable key.
 *
 * Checkout Sessions (`mode: payment`) come with a hosted page served here (`/c/pay/<id>`: a
 * form taking a test card number, as a test posts it); the PaymentIntent is made when the
 * customer first tries to pay, as Stripe does, and a paid session redirects to its success
 * address.
 *
 * Billing (fakeStripeBilling.ts): prices by lookup key, Checkout in `mode: subscription`,
 * subscriptions and invoices, proration, renewals and Stripe's retries when the fake's clock
 * moves (`advanceClock`), and the customer portal with its own page (`/p/session/<id>`).
 *
 * Events are kept, not pushed: a test delivers them (as often and as concurrently as it
 * likes) with a signature made by the library's own `generateTestHeaderString`.
 */
export const FAKE_SECRET_KEY = "sk_test_fakestripe"
export const FAKE_PUBLISHABLE_KEY = "pk_test_fakestripe"
export const FAKE_WEBHOOK_SECRET = "whsec_fakestripe"

type Behaviour = "succeeds" | "declined" | "insufficient_funds" | "authentication_required"

interface PaymentMethod {
  id: string
  object: "payment_method"
  type: "card"
  customer: string | null
  card: { brand: string; last4: string; exp_month: number; exp_year: number; country: string }
  behaviour: Behaviour
}

interface PaymentIntent {
  id: string
  object: "payment_intent"
  amount: number
  amount_received: number
  currency: string
  status: string
  client_secret: string
  customer: string | null
  payment_method: string | null
  latest_charge: string | null
  metadata: Record<string, string>
  setup_future_usage: string | null
  last_payment_error: { type: string; code: string; message: string } | null
  description: string | null
  capture_method: "automatic"
  confirmation_method: "automatic"
  created: number
  livemode: false
}

interface Charge {
  id: string
  object: "charge"
  amount: number
  amount_refunded: number
  currency: string
  payment_intent: string
  payment_method: string
  paid: boolean
  refunded: boolean
  disputed: boolean
  status: "succeeded"
  receipt_url: string
  payment_method_details: { type: "card"; card: { brand: string; last4: string; exp_month: number; exp_year: number } }
  created: number
  livemode: false
}

interface CheckoutSession {
  id: string
  object: "checkout.session"
  mode: string
  status: "open" | "complete" | "expired"
  payment_status: "unpaid" | "paid"
  url: string | null
  amount_total: number
  currency: string
  customer: string | null
  client_reference_id: string | null
  payment_intent: string | null
  setup_intent: string | null
  subscription: string | null
  payment_intent_data: {
    description: string | null
    metadata: Record<string, string>
    setup_future_usage: string | null
  }
  line_items: Array<{ name: string; unit_amount: number; quantity: number }>
  metadata: Record<string, string>
  success_url: string
  cancel_url: string
  created: number
  expires_at: number
  livemode: false
}

/** Card numbers typed on the hosted page, and the test payment method each stands for. */
const hostedCards: Record<string, string> = {
  "4242424242424242": "pm_card_visa",
  "5555555555554444": "pm_card_mastercard",
  "4000000000000002": "pm_card_chargeDeclined",
  "4000000000009995": "pm_card_chargeDeclinedInsufficientFunds",
  "4000002760003184": "pm_card_authenticationRequired"
}

export interface StoredEvent {
  readonly id: string
  readonly type: string
  readonly payload: string
}

export type Trouble = "500" | "hang" | "garbage"

const testMethods: Record<string, { behaviour: Behaviour; brand: string; last4: string }> = {
  pm_card_visa: { behaviour: "succeeds", brand: "visa", last4: "4242" },
  pm_card_mastercard: { behaviour: "succeeds", brand: "mastercard", last4: "4444" },
  pm_card_chargeDeclined: { behaviour: "declined", brand: "visa", last4: "0002" },
  pm_card_chargeDeclinedInsufficientFunds: { behaviour: "insufficient_funds", brand: "visa", last4: "9995" },
  pm_card_authenticationRequired: { behaviour: "authentication_required", brand: "visa", last4: "3184" }
}

const id = (prefix: string) => `${prefix}_${randomBytes(12).toString("hex")}`
const now = () => Math.floor(Date.now() / 1000)

/** Stripe's form encoding back into an object (`a[b]=c`, `expand[0]=x`). */
const parseForm = (body: string) => {
  const out: Record<string, any> = {}
  for (const [key, value] of new URLSearchParams(body)) {
    const parts = key.split(/\[|\]/).filter((p) => p !== "")
    let target = out
    for (let i = 0; i < parts.length - 1; i++) target = target[parts[i]!] ??= {}
    target[parts[parts.length - 1]!] = value
  }
  return out
}

export interface FakeStripe {
  readonly url: string
  readonly paymentIntents: Map<string, PaymentIntent>
  readonly checkoutSessions: Map<string, CheckoutSession>
  readonly paymentMethods: Map<string, PaymentMethod>
  readonly customers: Set<string>
  readonly events: Array<StoredEvent>
  /** Requests seen, as `METHOD path` with their idempotency key. */
  readonly requests: Array<{ readonly line: string; readonly idempotencyKey: string | undefined }>
  /** The next `count` requests (optionally only those whose line starts with `prefix`) misbehave. */
  readonly trouble: (mode: Trouble, count?: number, prefix?: string) => void
  /** Answers to requests whose line starts with `prefix` wait for `ms` first. */
  readonly delay: (prefix: string, ms: number) => void
  /** Holds answers to matching requests until the returned release is called. */
  readonly hold: (prefix: string) => { readonly reached: Promise<void>; readonly release: () => void }
  /** Changes what a saved card does from now on. */
  readonly setBehaviour: (paymentMethodId: string, behaviour: Behaviour) => void
  /** The customer pays in the browser, as Stripe.js would: the official library with the publishable key. */
  readonly browserConfirm: (
    paymentIntentId: string,
    clientSecret: string,
    paymentMethod: string
  ) => Promise<Stripe.PaymentIntent>
  /** Refunds (part of) a succeeded payment, as the dashboard would; answers the `charge.refunded` event. */
  readonly refund: (paymentIntentId: string, amount: number) => StoredEvent
  /** The card holder's bank disputes a payment; answers the `charge.dispute.created` event. */
  readonly dispute: (paymentIntentId: string, amount: number) => StoredEvent
  /** The payment's dispute is decided; answers the `charge.dispute.closed` event. */
  readonly closeDispute: (paymentIntentId: string, outcome: "won" | "lost") => StoredEvent
  /**
   * The customer pays on the hosted checkout page with a card number (a plain form post, as
   * the browser sends it); answers the page's status and where it redirects (the success
   * address on payment).
   */
  readonly payCheckout: (
    pageUrl: string,
    cardNumber: string
  ) => Promise<{ status: number; location: string | null; text: string }>
  /** The session runs out of time at Stripe; answers the `checkout.session.expired` event. */
  readonly expireCheckout: (sessionId: string) => StoredEvent
  readonly lastEvent: (type: string, paymentIntentId: string) => StoredEvent
  readonly subscriptions: ReturnType<typeof fakeBilling>["subscriptions"]
  readonly invoices: ReturnType<typeof fakeBilling>["invoices"]
  readonly prices: ReturnType<typeof fakeBilling>["prices"]
  /**
   * Moves the fake's clock (seconds) and runs what came due: renewals, and one more try of
   * each renewal being retried; answers the events it emitted.
   */
  readonly advanceClock: (seconds: number) => Array<StoredEvent>
  /** How many tries of a renewal Stripe makes before it cancels the subscription (default 4). */
  readonly setRenewalAttempts: (attempts: number) => void
  /** The customer uses the portal page: cancels, or replaces the card; answers the page's status and text. */
  readonly usePortal: (
    portalUrl: string,
    form: { action: "cancel" } | { action: "remove_card" } | { action: "card"; card_number: string }
  ) => Promise<{ status: number; text: string }>
  /** Posts an event to `url`, signed with the library's test-header helper; answers status and body. */
  readonly deliver: (url: string, event: StoredEvent, secret?: string) => Promise<{ status: number; body: any }>
  readonly count: (prefix: string) => number
  readonly close: () => Promise<void>
}

export const startFakeStripe = async (): Promise<FakeStripe> => {
  const paymentIntents = new Map<string, PaymentIntent>()
  const paymentMethods = new Map<string, PaymentMethod>()
  const charges = new Map<string, Charge>()
  const disputes = new Map<string, Record<string, unknown>>()
  const customers = new Set<string>()
  const checkoutSessions = new Map<string, CheckoutSession>()
  const setupIntents = new Map<string, Record<string, any>>()
  const events: Array<StoredEvent> = []
  let baseUrl = ""
  const requests: Array<{ line: string; idempotencyKey: string | undefined }> = []
  const idempotent = new Map<string, { body: string; status: number; answer: string }>()
  const troubles: Array<{ mode: Trouble; prefix: string }> = []
  const delays: Array<{ prefix: string; ms: number }> = []
  const holds: Array<{ prefix: string; reached: () => void; released: Promise<void> }> = []
  const hanging = new Set<http.ServerResponse>()
  const stripeLib = new Stripe(FAKE_SECRET_KEY, { apiVersion: STRIPE_API_VERSION })
  let clockOffset = 0
  /** Subscription requests of checkout sessions in `mode: subscription`. */
  const subscriptionRequests = new Map<
    string,
    { priceId: string; metadata: Record<string, string>; description: string | null }
  >()

  const emit = (type: string, object: unknown): StoredEvent => {
    const event = {
      id: id("evt"),
      object: "event",
      api_version: STRIPE_API_VERSION,
      created: now(),
      data: { object },
      livemode: false,
      pending_webhooks: 1,
      request: { id: null, idempotency_key: null },
      type
    }
    const stored = { id: event.id, type, payload: JSON.stringify(event) }
    events.push(stored)
    return stored
  }

  const expanded = (pi: PaymentIntent, expand: Array<string>) => ({
    ...pi,
    latest_charge: expand.includes("latest_charge") && pi.latest_charge !== null
      ? charges.get(pi.latest_charge)!
      : pi.latest_charge,
    payment_method: expand.includes("payment_method") && pi.payment_method !== null
      ? (({ behaviour: _b, ...pm }) => pm)(paymentMethods.get(pi.payment_method)!)
      : pi.payment_method
  })

  const methodFor = (token: string, customer: string | null): PaymentMethod | undefined => {
    const existing = paymentMethods.get(token)
    if (existing !== undefined) return existing
    const test = testMethods[token]
    if (test === undefined) return undefined
    const pm: PaymentMethod = {
      id: id("pm"),
      object: "payment_method",
      type: "card",
      customer,
      card: { brand: test.brand, last4: test.last4, exp_month: 12, exp_year: 2034, country: "US" },
      behaviour: test.behaviour
    }
    paymentMethods.set(pm.id, pm)
    return pm
  }

  const billing = fakeBilling({
    emit,
    methodFor,
    method: (pmId) => paymentMethods.get(pmId),
    clock: () => now() + clockOffset,
    baseUrl: () => baseUrl
  })

  /** Charges a payment intent with a method; answers the error body when it is declined. */
  const attempt = (pi: PaymentIntent, pm: PaymentMethod, offSession: boolean) => {
    pi.payment_method = pm.id
    const fails = pm.behaviour === "declined" || pm.behaviour === "insufficient_funds" ||
      (pm.behaviour === "authentication_required" && offSession)
    if (fails) {
      const code = pm.behaviour === "authentication_required" ? "authentication_required" : "card_declined"
      const message = pm.behaviour === "declined"
        ? "Your card was declined."
        : pm.behaviour === "insufficient_funds"
        ? "Your card has insufficient funds."
        : "Your card was declined. This transaction requires authentication."
      pi.status = "requires_payment_method"
      pi.last_payment_error = { type: "card_error", code, message }
      emit("payment_intent.payment_failed", { ...pi })
      return { error: { type: "card_error", code, message, payment_intent: expanded(pi, []) } }
    }
    const charge: Charge = {
      id: id("ch"),
      object: "charge",
      amount: pi.amount,
      amount_refunded: 0,
      currency: pi.currency,
      payment_intent: pi.id,
      payment_method: pm.id,
      paid: true,
      refunded: false,
      disputed: false,
      status: "succeeded",
      receipt_url: `https://pay.stripe.com/receipts/${id("rcpt")}`,
      payment_method_details: {
        type: "card",
        card: { brand: pm.card.brand, last4: pm.card.last4, exp_month: pm.card.exp_month, exp_year: pm.card.exp_year }
      },
      created: now(),
      livemode: false
    }
    charges.set(charge.id, charge)
    pi.latest_charge = charge.id
    pi.status = "succeeded"
    pi.amount_received = pi.amount
    pi.last_payment_error = null
    if (pi.setup_future_usage !== null && pi.customer !== null) pm.customer = pi.customer
    emit("payment_intent.succeeded", { ...pi })
    return undefined
  }

  /** An open session ends unpaid: its payment, if the customer tried, is cancelled. */
  const expire = (session: CheckoutSession) => {
    session.status = "expired"
    session.url = null
    const pi = session.payment_intent === null ? undefined : paymentIntents.get(session.payment_intent)
    if (pi !== undefined && pi.status !== "succeeded" && pi.status !== "canceled") {
      pi.status = "canceled"
      emit("payment_intent.canceled", { ...pi })
    }
    return emit("checkout.session.expired", { ...session })
  }

  const page = (status: number, body: string) => ({
    status,
    html:
      `<!doctype html><html><head><link rel="icon" href="data:,"></head><body><h1>Test checkout</h1>${body}</body></html>`
  })

  /** The hosted page: shows the amount and a card form; a post pays (making the PaymentIntent on the first try). */
  const hosted = (method: string, sessionId: string, form: Record<string, any>): {
    status: number
    html?: string
    location?: string
  } => {
    const session = checkoutSessions.get(sessionId)
    if (session === undefined) return page(404, "<p>No such checkout</p>")
    if (session.status !== "open") return page(410, `<p>This checkout is ${session.status}</p>`)
    const action = session.mode === "setup"
      ? "Save card"
      : session.mode === "subscription"
      ? `Subscribe ${(session.amount_total / 100).toFixed(2)} ${session.currency.toUpperCase()} a month`
      : `Pay ${(session.amount_total / 100).toFixed(2)} ${session.currency.toUpperCase()}`
    const form_ =
      `<form method="post"><input name="card_number"><button>${action}</button></form><a href="${session.cancel_url}">Back</a>`
    if (method === "GET") return page(200, form_)
    const token = hostedCards[String(form.card_number ?? "").replace(/\s/g, "")]
    if (token === undefined) return page(200, `<p role="alert">Your card number is invalid.</p>${form_}`)
    if (session.mode === "setup") {
      // Saving a card: nothing is charged; a card the bank refuses is refused here too.
      const pm = methodFor(token, session.customer)!
      if (pm.behaviour === "declined" || pm.behaviour === "insufficient_funds") {
        return page(200, `<p role="alert">Your card was declined.</p>${form_}`)
      }
      pm.customer = session.customer
      const setup = {
        id: id("seti"),
        object: "setup_intent",
        status: "succeeded",
        customer: session.customer,
        payment_method: pm.id,
        usage: "off_session",
        metadata: session.metadata,
        livemode: false
      }
      setupIntents.set(setup.id, setup)
      session.setup_intent = setup.id
      session.status = "complete"
      session.url = null
      emit("checkout.session.completed", { ...session })
      return { status: 303, location: session.success_url.replace("{CHECKOUT_SESSION_ID}", session.id) }
    }
    if (session.mode === "subscription") {
      const started = billing.subscribe(
        { customer: session.customer, ...subscriptionRequests.get(session.id)! },
        methodFor(token, session.customer)!
      )
      if ("error" in started) return page(200, `<p role="alert">${started.error}</p>${form_}`)
      session.subscription = started.subscription.id
      session.status = "complete"
      session.payment_status = "paid"
      session.url = null
      emit("checkout.session.completed", { ...session })
      return { status: 303, location: session.success_url.replace("{CHECKOUT_SESSION_ID}", session.id) }
    }
    let pi = session.payment_intent === null ? undefined : paymentIntents.get(session.payment_intent)
    if (pi === undefined) {
      pi = {
        id: id("pi"),
        object: "payment_intent",
        amount: session.amount_total,
        amount_received: 0,
        currency: session.currency,
        status: "requires_payment_method",
        client_secret: "",
        customer: session.customer,
        payment_method: null,
        latest_charge: null,
        metadata: session.payment_intent_data.metadata,
        setup_future_usage: session.payment_intent_data.setup_future_usage,
        last_payment_error: null,
        description: session.payment_intent_data.description,
        capture_method: "automatic",
        confirmation_method: "automatic",
        created: now(),
        livemode: false
      }
      pi.client_secret = `${pi.id}_secret_${randomBytes(12).toString("hex")}`
      paymentIntents.set(pi.id, pi)
      session.payment_intent = pi.id
    }
    const failed = attempt(pi, methodFor(token, pi.customer)!, false)
    // The page shows the decline and keeps its form, as Stripe's does.
    if (failed !== undefined) return page(200, `<p role="alert">${failed.error.message}</p>${form_}`)
    session.status = "complete"
    session.payment_status = "paid"
    session.url = null
    emit("checkout.session.completed", { ...session })
    return { status: 303, location: session.success_url.replace("{CHECKOUT_SESSION_ID}", session.id) }
  }

  const route = (
    method: string,
    path: string,
    form: Record<string, any>,
    auth: string
  ): { status: number; body: unknown } => {
    const secret = auth === `Bearer ${FAKE_SECRET_KEY}`
    const publishable = auth === `Bearer ${FAKE_PUBLISHABLE_KEY}`
    if (!secret && !publishable) {
      return { status: 401, body: { error: { type: "invalid_request_error", message: "Invalid API Key provided" } } }
    }
    /** A confirm or cancel of an intent that has already finished. */
    const unexpectedState = (status: string) => ({
      status: 400,
      body: {
        error: {
          type: "invalid_request_error",
          code: "payment_intent_unexpected_state",
          message: `This PaymentIntent's status is ${status}`
        }
      }
    })
    const notFound = (what: string) => ({
      status: 404,
      body: { error: { type: "invalid_request_error", code: "resource_missing", message: `No such ${what}` } }
    })
    const segments = path.split("/").filter((s) => s !== "")
    const billed = secret ? billing.route(method, segments, form) : undefined
    if (billed !== undefined) return billed
    if (method === "POST" && path === "/v1/customers" && secret) {
      const customer = {
        id: id("cus"),
        object: "customer",
        description: form.description ?? null,
        metadata: form.metadata ?? {}
      }
      customers.add(customer.id)
      return { status: 200, body: customer }
    }
    if (method === "POST" && path === "/v1/payment_intents" && secret) {
      const pi: PaymentIntent = {
        id: id("pi"),
        object: "payment_intent",
        amount: Number(form.amount),
        amount_received: 0,
        currency: String(form.currency),
        status: "requires_payment_method",
        client_secret: "",
        customer: form.customer ?? null,
        payment_method: null,
        latest_charge: null,
        metadata: form.metadata ?? {},
        setup_future_usage: form.setup_future_usage ?? null,
        last_payment_error: null,
        description: form.description ?? null,
        capture_method: "automatic",
        confirmation_method: "automatic",
        created: now(),
        livemode: false
      }
      pi.client_secret = `${pi.id}_secret_${randomBytes(12).toString("hex")}`
      paymentIntents.set(pi.id, pi)
      if (form.confirm === "true") {
        const pm = form.payment_method === undefined ? undefined : methodFor(String(form.payment_method), pi.customer)
        if (pm === undefined) return notFound("payment_method")
        const failed = attempt(pi, pm, form.off_session === "true")
        if (failed !== undefined) return { status: 402, body: failed }
      }
      return { status: 200, body: expanded(pi, asList(form.expand)) }
    }
    if (method === "POST" && path === "/v1/checkout/sessions" && secret) {
      const items = asList(form.line_items) as unknown as Array<Record<string, any>>
      const lineItems = items.map((item) => {
        const price = item.price === undefined ? undefined : billing.prices.get(String(item.price))
        return {
          name: price === undefined ? String(item.price_data?.product_data?.name ?? "") : price.nickname ?? "",
          unit_amount: price === undefined ? Number(item.price_data?.unit_amount) : price.unit_amount,
          quantity: Number(item.quantity ?? 1)
        }
      })
      if (form.mode === "subscription" && (items.length !== 1 || !billing.prices.has(String(items[0]!.price)))) {
        return {
          status: 400,
          body: { error: { type: "invalid_request_error", message: "A subscription needs one recurring price" } }
        }
      }
      const session: CheckoutSession = {
        id: id("cs_test"),
        object: "checkout.session",
        mode: String(form.mode),
        status: "open",
        payment_status: "unpaid",
        url: null,
        amount_total: lineItems.reduce((sum, item) => sum + item.unit_amount * item.quantity, 0),
        currency: String(items[0]?.price_data?.currency ?? form.currency ?? "usd"),
        customer: form.customer ?? null,
        client_reference_id: form.client_reference_id ?? null,
        payment_intent: null,
        setup_intent: null,
        subscription: null,
        payment_intent_data: {
          description: form.payment_intent_data?.description ?? null,
          metadata: form.payment_intent_data?.metadata ?? {},
          setup_future_usage: form.payment_intent_data?.setup_future_usage ?? null
        },
        line_items: lineItems,
        metadata: form.metadata ?? {},
        success_url: String(form.success_url),
        cancel_url: String(form.cancel_url),
        created: now(),
        expires_at: now() + 24 * 3600,
        livemode: false
      }
      session.url = `${baseUrl}/c/pay/${session.id}`
      checkoutSessions.set(session.id, session)
      if (session.mode === "subscription") {
        subscriptionRequests.set(session.id, {
          priceId: String(items[0]!.price),
          metadata: form.subscription_data?.metadata ?? {},
          description: form.subscription_data?.description ?? null
        })
      }
      return { status: 200, body: session }
    }
    if (segments[0] === "v1" && segments[1] === "checkout" && segments[2] === "sessions" && segments[3] !== undefined) {
      const session = checkoutSessions.get(segments[3])
      if (session === undefined || !secret) return notFound("checkout.session")
      if (method === "GET" && segments.length === 4) return { status: 200, body: session }
      if (method === "POST" && segments[4] === "expire") {
        if (session.status !== "open") {
          return {
            status: 400,
            body: {
              error: {
                type: "invalid_request_error",
                message:
                  `Only Checkout Sessions with a status in ["open"] can be expired. This session has a status of "${session.status}".`
              }
            }
          }
        }
        expire(session)
        return { status: 200, body: session }
      }
    }
    if (method === "GET" && segments[0] === "v1" && segments[1] === "setup_intents" && segments[2] !== undefined) {
      const setup = setupIntents.get(segments[2])
      if (setup === undefined || !secret) return notFound("setup_intent")
      const pm = paymentMethods.get(setup.payment_method)
      return {
        status: 200,
        body: asList(form.expand).includes("payment_method") && pm !== undefined
          ? { ...setup, payment_method: (({ behaviour: _b, ...rest }) => rest)(pm) }
          : setup
      }
    }
    if (segments[0] === "v1" && segments[1] === "payment_intents" && segments[2] !== undefined) {
      const pi = paymentIntents.get(segments[2])
      if (pi === undefined) return notFound("payment_intent")
      if (publishable && form.client_secret !== pi.client_secret) return notFound("payment_intent")
      if (method === "GET" && segments.length === 3) return { status: 200, body: expanded(pi, asList(form.expand)) }
      if (method === "POST" && segments[3] === "confirm") {
        if (pi.status === "succeeded" || pi.status === "canceled") {
          return unexpectedState(pi.status)
        }
        const pm = methodFor(String(form.payment_method), pi.customer)
        if (pm === undefined) return notFound("payment_method")
        const failed = attempt(pi, pm, false)
        if (failed !== undefined) return { status: 402, body: failed }
        return { status: 200, body: expanded(pi, []) }
      }
      if (method === "POST" && segments[3] === "cancel" && secret) {
        if (pi.status === "succeeded" || pi.status === "canceled") {
          return unexpectedState(pi.status)
        }
        pi.status = "canceled"
        emit("payment_intent.canceled", { ...pi })
        return { status: 200, body: expanded(pi, []) }
      }
    }
    return notFound(`route ${method} ${path}`)
  }

  const server = http.createServer((req, res) => {
    const chunks: Array<Buffer> = []
    req.on("data", (chunk: Buffer) => chunks.push(chunk))
    req.on("end", async () => {
      const url = new URL(req.url ?? "/", "http://fake")
      const sent = Buffer.concat(chunks).toString("utf8")
      // The library sends the parameters of a GET (and a DELETE) in the query string.
      const body = req.method === "GET" || (req.method === "DELETE" && sent === "") ? url.search.slice(1) : sent
      const line = `${req.method} ${url.pathname}`
      const key = req.headers["idempotency-key"] as string | undefined
      requests.push({ line, idempotencyKey: key })
      if (url.pathname.startsWith("/p/session/")) {
        const answer = billing.portal(
          req.method ?? "GET",
          url.pathname.slice("/p/session/".length),
          parseForm(body),
          (number) => hostedCards[number.replace(/\s/g, "")]
        )
        res.writeHead(answer.status, { "content-type": "text/html; charset=utf-8" })
        return void res.end(answer.html)
      }
      if (url.pathname.startsWith("/c/pay/")) {
        const answer = hosted(req.method ?? "GET", url.pathname.slice("/c/pay/".length), parseForm(body))
        res.writeHead(answer.status, {
          "content-type": "text/html; charset=utf-8",
          ...(answer.location === undefined ? {} : { location: answer.location })
        })
        return void res.end(answer.html ?? "")
      }
      const troubleIndex = troubles.findIndex((t) => line.startsWith(t.prefix))
      if (troubleIndex >= 0) {
        const [trouble] = troubles.splice(troubleIndex, 1)
        if (trouble!.mode === "hang") return void hanging.add(res)
        if (trouble!.mode === "500") {
          res.writeHead(500, { "content-type": "application/json", "request-id": id("req") })
          return void res.end(JSON.stringify({ error: { type: "api_error", message: "An unknown error occurred" } }))
        }
        res.writeHead(200, { "content-type": "application/json" })
        return void res.end(JSON.stringify({ id: "what", object: "nothing_we_know" }))
      }
      for (const d of delays) if (line.startsWith(d.prefix)) await new Promise((r) => setTimeout(r, d.ms))
      const held = holds.find((h) => line.startsWith(h.prefix))
      if (held !== undefined) {
        holds.splice(holds.indexOf(held), 1)
        held.reached()
        await held.released
      }
      const send = (status: number, answer: string) => {
        res.writeHead(status, {
          "content-type": "application/json",
          "request-id": id("req"),
          "stripe-version": STRIPE_API_VERSION
        })
        res.end(answer)
      }
      if (key !== undefined && req.method === "POST") {
        const seen = idempotent.get(key)
        if (seen !== undefined) {
          if (seen.body !== body) {
            return send(
              400,
              JSON.stringify({
                error: {
                  type: "idempotency_error",
                  message:
                    "Keys for idempotent requests can only be used with the same parameters they were first used with."
                }
              })
            )
          }
          return send(seen.status, seen.answer)
        }
      }
      const { body: answerBody, status } = route(
        req.method ?? "GET",
        url.pathname,
        parseForm(body),
        String(req.headers.authorization ?? "")
      )
      const answer = JSON.stringify(answerBody)
      if (key !== undefined && req.method === "POST") idempotent.set(key, { body, status, answer })
      send(status, answer)
    })
  })
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve))
  const port = (server.address() as { port: number }).port
  const url = `http://127.0.0.1:${port}`
  baseUrl = url
  const browser = new Stripe(FAKE_PUBLISHABLE_KEY, {
    apiVersion: STRIPE_API_VERSION,
    host: "127.0.0.1",
    port,
    protocol: "http",
    maxNetworkRetries: 0
  })

  const chargeOf = (paymentIntentId: string) => {
    const pi = paymentIntents.get(paymentIntentId)
    if (pi?.latest_charge === null || pi === undefined) throw new Error(`${paymentIntentId} has no charge`)
    return charges.get(pi.latest_charge)!
  }

  return {
    url,
    paymentIntents,
    checkoutSessions,
    paymentMethods,
    customers,
    events,
    requests,
    trouble: (mode, count = 1, prefix = "") => {
      for (let i = 0; i < count; i++) troubles.push({ mode, prefix })
    },
    delay: (prefix, ms) => void delays.push({ prefix, ms }),
    hold: (prefix) => {
      let reached!: () => void
      let release!: () => void
      const reachedPromise = new Promise<void>((resolve) => (reached = resolve))
      const released = new Promise<void>((resolve) => (release = resolve))
      holds.push({ prefix, reached, released })
      return { reached: reachedPromise, release }
    },
    setBehaviour: (paymentMethodId, behaviour) => {
      paymentMethods.get(paymentMethodId)!.behaviour = behaviour
    },
    browserConfirm: (paymentIntentId, clientSecret, paymentMethod) =>
      browser.paymentIntents.confirm(
        paymentIntentId,
        { client_secret: clientSecret, payment_method: paymentMethod } as any
      ),
    refund: (paymentIntentId, amount) => {
      const charge = chargeOf(paymentIntentId)
      charge.amount_refunded = Math.min(charge.amount, charge.amount_refunded + amount)
      charge.refunded = charge.amount_refunded === charge.amount
      return emit("charge.refunded", { ...charge })
    },
    dispute: (paymentIntentId, amount) => {
      const charge = chargeOf(paymentIntentId)
      charge.disputed = true
      const dispute = {
        id: id("dp"),
        object: "dispute",
        amount,
        charge: charge.id,
        payment_intent: paymentIntentId,
        currency: charge.currency,
        reason: "fraudulent",
        status: "needs_response",
        created: now(),
        livemode: false
      }
      disputes.set(paymentIntentId, dispute)
      return emit("charge.dispute.created", { ...dispute })
    },
    closeDispute: (paymentIntentId, outcome) => {
      const dispute = disputes.get(paymentIntentId)
      if (dispute === undefined) throw new Error(`${paymentIntentId} has no dispute`)
      dispute.status = outcome
      return emit("charge.dispute.closed", { ...dispute })
    },
    payCheckout: async (pageUrl, cardNumber) => {
      const response = await fetch(pageUrl, {
        method: "POST",
        headers: { "content-type": "application/x-www-form-urlencoded" },
        body: new URLSearchParams({ card_number: cardNumber }).toString(),
        redirect: "manual"
      })
      return { status: response.status, location: response.headers.get("location"), text: await response.text() }
    },
    expireCheckout: (sessionId) => {
      const session = checkoutSessions.get(sessionId)
      if (session === undefined || session.status !== "open") throw new Error(`${sessionId} is not open`)
      return expire(session)
    },
    subscriptions: billing.subscriptions,
    invoices: billing.invoices,
    prices: billing.prices,
    advanceClock: (seconds) => {
      const before = events.length
      clockOffset += seconds
      billing.renewDue()
      return events.slice(before)
    },
    setRenewalAttempts: billing.setMaxAttempts,
    usePortal: async (portalUrl, form) => {
      const response = await fetch(portalUrl, {
        method: "POST",
        headers: { "content-type": "application/x-www-form-urlencoded" },
        body: new URLSearchParams(form).toString()
      })
      return { status: response.status, text: await response.text() }
    },
    lastEvent: (type, paymentIntentId) => {
      const found = [...events].reverse().find((e) => e.type === type && e.payload.includes(paymentIntentId))
      if (found === undefined) throw new Error(`No ${type} event for ${paymentIntentId}`)
      return found
    },
    deliver: async (target, event, secret = FAKE_WEBHOOK_SECRET) => {
      const header = stripeLib.webhooks.generateTestHeaderString({ payload: event.payload, secret })
      const response = await fetch(target, {
        method: "POST",
        headers: {
          "content-type": "application/json; charset=utf-8",
          "stripe-signature": header,
          "user-agent": "Stripe/1.0 (+https://stripe.com/docs/webhooks)"
        },
        body: event.payload
      })
      const text = await response.text()
      let body: any = text
      try {
        body = JSON.parse(text)
      } catch {
        // not JSON
      }
      return { status: response.status, body }
    },
    count: (prefix) => requests.filter((r) => r.line.startsWith(prefix)).length,
    close: async () => {
      for (const res of hanging) res.destroy()
      await new Promise<void>((resolve) => server.close(() => resolve()))
    }
  }
}
