import * as http from "node:http"
import Stripe from "stripe"
import { billing as makeBilling, type BillingMethod } from "./billing.js"
import { type Behaviour, cardByNumber, cardByToken, declineMessages, refuses } from "./cards.js"
import { deliverEvent, eventLog, newId, type StoredEvent } from "./events.js"
import { asList, parseForm } from "./forms.js"
import { EMULATOR_PUBLISHABLE_KEY, EMULATOR_SECRET_KEY, EMULATOR_WEBHOOK_SECRET } from "./keys.js"
import { checkoutPage, type Page, pageHeaders, receipt } from "./pages.js"

/**
 * A Stripe API emulator on loopback: the part of Stripe's HTTP API the service uses, spoken
 * as Stripe speaks it (form-encoded requests, Stripe's JSON objects and errors, idempotency
 * keys answering the first response again, test payment methods such as `pm_card_visa`),
 * so the official library works against it unchanged: customers, PaymentIntents (created,
 * confirmed in the browser with the publishable key, charged off-session, cancelled),
 * SetupIntents, payment methods, Checkout Sessions in `payment`, `setup` and `subscription`
 * mode with their hosted pages (`/c/pay/<id>`: a form taking a test card, the 3-D Secure
 * step of 4000 0027 6000 3184), refunds, disputes, and Billing (billing.ts: prices,
 * subscriptions and invoices on a clock that `advanceClock` moves, the customer portal).
 *
 * Every change makes Stripe's event (events.ts): kept for a test to deliver as often and as
 * concurrently as it likes, and with `webhook` set also delivered, signed, to that endpoint.
 */
/** The API version answered when a request names none (the one the pinned library is written for). */
const DEFAULT_API_VERSION = "2026-10-28.endive"

export interface EmulatorOptions {
  /** Loopback port to listen on (default: any free one). */
  readonly port?: number
  readonly apiVersion?: string
  /** Deliver every event, signed with `EMULATOR_WEBHOOK_SECRET`, to this address. */
  readonly webhookUrl?: () => string | undefined
  /** Look at the clock every this many milliseconds for renewals and retries that came due (default: only when asked). */
  readonly renewEveryMs?: number
}

interface PaymentMethod extends BillingMethod {
  readonly object: "payment_method"
  readonly type: "card"
}

export interface PaymentIntent {
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

export interface Charge {
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

export interface CheckoutSession {
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

export interface StripeEmulator {
  readonly url: string
  readonly paymentIntents: Map<string, PaymentIntent>
  readonly checkoutSessions: Map<string, CheckoutSession>
  readonly paymentMethods: Map<string, PaymentMethod>
  readonly charges: Map<string, Charge>
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
   * address on payment). A card that asks for 3-D Secure has its step completed (or failed).
   */
  readonly payCheckout: (
    pageUrl: string,
    cardNumber: string,
    authentication?: "complete" | "fail"
  ) => Promise<{ status: number; location: string | null; text: string }>
  /** The session runs out of time at Stripe; answers the `checkout.session.expired` event. */
  readonly expireCheckout: (sessionId: string) => StoredEvent
  readonly lastEvent: (type: string, paymentIntentId: string) => StoredEvent
  readonly subscriptions: ReturnType<typeof makeBilling>["subscriptions"]
  readonly invoices: ReturnType<typeof makeBilling>["invoices"]
  readonly prices: ReturnType<typeof makeBilling>["prices"]
  /**
   * Moves the emulator's clock (seconds) and runs what came due: renewals, and the retries
   * of failed ones whose time came; answers the events it emitted. Over HTTP with the
   * secret key: `POST /_emulator/advance_clock` with `seconds`.
   */
  readonly advanceClock: (seconds: number) => Array<StoredEvent>
  /** How many tries of a renewal Stripe makes before it cancels the subscription (default 4). */
  readonly setRenewalAttempts: (attempts: number) => void
  /** The customer uses the portal page: cancels, replaces or removes the card; answers the page's status and text. */
  readonly usePortal: (
    portalUrl: string,
    form: { action: "cancel" } | { action: "remove_card" } | { action: "card"; card_number: string }
  ) => Promise<{ status: number; text: string }>
  /** Posts an event to `url`, signed as Stripe signs it; answers status and body. */
  readonly deliver: (url: string, event: StoredEvent, secret?: string) => Promise<{ status: number; body: any }>
  /** Whether every event so far reached the webhook endpoint (or was given up on). */
  readonly delivered: () => boolean
  readonly count: (prefix: string) => number
  readonly close: () => Promise<void>
}

const AUTHENTICATION_FAILED =
  "We are unable to authenticate your payment method. Please choose a different payment method and try again."

export type Trouble = "500" | "hang" | "garbage"

export const startStripeEmulator = async (options: EmulatorOptions = {}): Promise<StripeEmulator> => {
  const apiVersion = options.apiVersion ?? DEFAULT_API_VERSION
  const paymentIntents = new Map<string, PaymentIntent>()
  const paymentMethods = new Map<string, PaymentMethod>()
  const charges = new Map<string, Charge>()
  const disputes = new Map<string, Record<string, unknown>>()
  const customers = new Set<string>()
  const checkoutSessions = new Map<string, CheckoutSession>()
  const setupIntents = new Map<string, Record<string, any>>()
  let baseUrl = ""
  const requests: Array<{ line: string; idempotencyKey: string | undefined }> = []
  const idempotent = new Map<string, { body: string; status: number; answer: string }>()
  const troubles: Array<{ mode: Trouble; prefix: string }> = []
  const delays: Array<{ prefix: string; ms: number }> = []
  const holds: Array<{ prefix: string; reached: () => void; released: Promise<void> }> = []
  const hanging = new Set<http.ServerResponse>()
  let clockOffset = 0
  /** The emulator's clock in seconds: the machine's, moved on by `advanceClock`. */
  const clock = () => Math.floor(Date.now() / 1000) + clockOffset
  const log = eventLog({
    apiVersion,
    clock,
    webhook: options.webhookUrl === undefined ? undefined : { url: options.webhookUrl, secret: EMULATOR_WEBHOOK_SECRET }
  })
  const emit = log.emit
  const events = log.events
  /** Subscription requests of checkout sessions in `mode: subscription`. */
  const subscriptionRequests = new Map<
    string,
    { priceId: string; metadata: Record<string, string>; description: string | null }
  >()

  const withoutBehaviour = ({ behaviour: _b, ...pm }: PaymentMethod) => pm

  const expanded = (pi: PaymentIntent, expand: Array<string>) => ({
    ...pi,
    latest_charge: expand.includes("latest_charge") && pi.latest_charge !== null
      ? charges.get(pi.latest_charge)!
      : pi.latest_charge,
    payment_method: expand.includes("payment_method") && pi.payment_method !== null
      ? withoutBehaviour(paymentMethods.get(pi.payment_method)!)
      : pi.payment_method
  })

  /** A payment method by id, or a new one for a test token (`pm_card_visa`). */
  const methodFor = (token: string, customer: string | null): PaymentMethod | undefined => {
    const existing = paymentMethods.get(token)
    if (existing !== undefined) return existing
    const test = cardByToken(token)
    if (test === undefined) return undefined
    const pm: PaymentMethod = {
      id: newId("pm"),
      object: "payment_method",
      type: "card",
      customer,
      card: { brand: test.brand, last4: test.number.slice(-4), exp_month: 12, exp_year: 2034, country: "US" },
      behaviour: test.behaviour
    }
    paymentMethods.set(pm.id, pm)
    return pm
  }

  const newIntent = (fields: {
    amount: number
    currency: string
    customer: string | null
    metadata: Record<string, string>
    setup_future_usage: string | null
    description: string | null
  }): PaymentIntent => {
    const id = newId("pi")
    const pi: PaymentIntent = {
      id,
      object: "payment_intent",
      amount_received: 0,
      status: "requires_payment_method",
      client_secret: `${id}_secret_${newId("s").slice(2)}`,
      payment_method: null,
      latest_charge: null,
      last_payment_error: null,
      capture_method: "automatic",
      confirmation_method: "automatic",
      created: clock(),
      livemode: false,
      ...fields
    }
    paymentIntents.set(pi.id, pi)
    return pi
  }

  const billing = makeBilling({
    emit,
    methodFor,
    method: (pmId) => paymentMethods.get(pmId),
    clock,
    baseUrl: () => baseUrl
  })

  /** Charges a payment intent with a method; answers the error body when it is declined. */
  const attempt = (pi: PaymentIntent, pm: PaymentMethod, offSession: boolean) => {
    pi.payment_method = pm.id
    if (pm.behaviour !== "succeeds" && refuses(pm.behaviour, offSession)) {
      const code = pm.behaviour === "authentication_required" ? "authentication_required" : "card_declined"
      const message = declineMessages[pm.behaviour]
      pi.status = "requires_payment_method"
      pi.last_payment_error = { type: "card_error", code, message }
      emit("payment_intent.payment_failed", { ...pi })
      return { error: { type: "card_error", code, message, payment_intent: expanded(pi, []) } }
    }
    const charge: Charge = {
      id: newId("ch"),
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
      receipt_url: "",
      payment_method_details: {
        type: "card",
        card: { brand: pm.card.brand, last4: pm.card.last4, exp_month: pm.card.exp_month, exp_year: pm.card.exp_year }
      },
      created: clock(),
      livemode: false
    }
    charge.receipt_url = `${baseUrl}/receipts/${charge.id}`
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

  /** The session's PaymentIntent, made when the customer first tries to pay, as Stripe does. */
  const intentOf = (session: CheckoutSession): PaymentIntent => {
    const existing = session.payment_intent === null ? undefined : paymentIntents.get(session.payment_intent)
    if (existing !== undefined) return existing
    const pi = newIntent({
      amount: session.amount_total,
      currency: session.currency,
      customer: session.customer,
      metadata: session.payment_intent_data.metadata,
      setup_future_usage: session.payment_intent_data.setup_future_usage,
      description: session.payment_intent_data.description
    })
    session.payment_intent = pi.id
    return pi
  }

  /** A session paid (or its card saved): closed, reported, and the customer sent back. */
  const complete = (session: CheckoutSession): Page => {
    session.status = "complete"
    if (session.mode !== "setup") session.payment_status = "paid"
    session.url = null
    emit("checkout.session.completed", { ...session })
    return { status: 303, location: successUrl(session) }
  }

  const successUrl = (session: CheckoutSession) => session.success_url.replace("{CHECKOUT_SESSION_ID}", session.id)

  /**
   * The hosted page: the amount and a card form; a post pays (a decline keeps the form, as
   * Stripe's page does), saves the card or subscribes. A card whose bank wants 3-D Secure
   * shows the bank's step first; only a completed one goes on.
   */
  const hosted = (method: string, sessionId: string, form: Record<string, any>): Page => {
    const session = checkoutSessions.get(sessionId)
    if (session === undefined) return checkoutPage.missing()
    const amount = `${(session.amount_total / 100).toFixed(2)} ${session.currency.toUpperCase()}`
    const action = session.mode === "setup"
      ? "Save the card"
      : session.mode === "subscription"
      ? `Subscribe: ${amount} a month`
      : `Pay ${amount}`
    if (session.status === "complete") {
      // Paying again (the back button) charges nothing more.
      if (method === "POST") return { status: 303, location: successUrl(session) }
      const done = session.mode === "setup" ? "Card saved" : session.mode === "subscription" ? "Subscribed" : "Paid"
      return checkoutPage.ended(200, done, successUrl(session))
    }
    if (session.status === "expired") {
      return checkoutPage.ended(method === "POST" ? 410 : 200, "This checkout has ended", session.cancel_url)
    }
    const cardForm = (failure: string | null) => checkoutPage.form(action, session.cancel_url, failure)
    if (method === "GET") return cardForm(null)
    const card = cardByNumber(String(form.card_number ?? ""))
    if (card === undefined) return cardForm("Your card number is invalid.")
    if (card.behaviour === "authentication_required" && form.three_d_secure === undefined) {
      return checkoutPage.challenge(card.number, card.number.slice(-4))
    }
    const pm = methodFor(card.token, session.customer)!
    if (form.three_d_secure === "fail") {
      if (session.mode === "payment") {
        const pi = intentOf(session)
        pi.payment_method = pm.id
        pi.status = "requires_payment_method"
        pi.last_payment_error = {
          type: "card_error",
          code: "payment_intent_authentication_failure",
          message: AUTHENTICATION_FAILED
        }
        emit("payment_intent.payment_failed", { ...pi })
      }
      return cardForm(AUTHENTICATION_FAILED)
    }
    if (session.mode === "setup") {
      // Saving a card: nothing is charged; a card the bank refuses is refused here too.
      if (pm.behaviour === "declined" || pm.behaviour === "insufficient_funds") {
        return cardForm(declineMessages[pm.behaviour])
      }
      pm.customer = session.customer
      const setup = {
        id: newId("seti"),
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
      return complete(session)
    }
    if (session.mode === "subscription") {
      const started = billing.subscribe({ customer: session.customer, ...subscriptionRequests.get(session.id)! }, pm)
      if ("error" in started) return cardForm(started.error)
      session.subscription = started.subscription.id
      return complete(session)
    }
    const failed = attempt(intentOf(session), pm, false)
    return failed !== undefined ? cardForm(failed.error.message) : complete(session)
  }

  /** Refunds part of a charge, as the dashboard or the API would; emits `charge.refunded`. */
  const refundCharge = (charge: Charge, amount: number) => {
    charge.amount_refunded = Math.min(charge.amount, charge.amount_refunded + amount)
    charge.refunded = charge.amount_refunded === charge.amount
    emit("charge.refunded", { ...charge })
    return {
      id: newId("re"),
      object: "refund",
      amount,
      charge: charge.id,
      payment_intent: charge.payment_intent,
      currency: charge.currency,
      status: "succeeded",
      created: clock(),
      livemode: false
    }
  }

  const route = (
    method: string,
    path: string,
    form: Record<string, any>,
    auth: string
  ): { status: number; body: unknown } => {
    const secret = auth === `Bearer ${EMULATOR_SECRET_KEY}`
    const publishable = auth === `Bearer ${EMULATOR_PUBLISHABLE_KEY}`
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
    if (method === "POST" && path === "/_emulator/advance_clock" && secret) {
      const made = advanceClock(Number(form.seconds ?? 0))
      return { status: 200, body: { object: "list", data: made.map((event) => JSON.parse(event.payload)) } }
    }
    const segments = path.split("/").filter((s) => s !== "")
    const billed = secret ? billing.route(method, segments, form) : undefined
    if (billed !== undefined) return billed
    if (method === "POST" && path === "/v1/customers" && secret) {
      const customer = {
        id: newId("cus"),
        object: "customer",
        description: form.description ?? null,
        metadata: form.metadata ?? {}
      }
      customers.add(customer.id)
      return { status: 200, body: customer }
    }
    if (method === "POST" && path === "/v1/payment_intents" && secret) {
      const pi = newIntent({
        amount: Number(form.amount),
        currency: String(form.currency),
        customer: form.customer ?? null,
        metadata: form.metadata ?? {},
        setup_future_usage: form.setup_future_usage ?? null,
        description: form.description ?? null
      })
      if (form.confirm === "true") {
        const pm = form.payment_method === undefined ? undefined : methodFor(String(form.payment_method), pi.customer)
        if (pm === undefined) return notFound("payment_method")
        const failed = attempt(pi, pm, form.off_session === "true")
        if (failed !== undefined) return { status: 402, body: failed }
      }
      return { status: 200, body: expanded(pi, asList(form.expand)) }
    }
    if (method === "POST" && path === "/v1/refunds" && secret) {
      const pi = paymentIntents.get(String(form.payment_intent))
      if (pi === undefined || pi.latest_charge === null) return notFound("payment_intent")
      const charge = charges.get(pi.latest_charge)!
      const amount = form.amount === undefined ? charge.amount - charge.amount_refunded : Number(form.amount)
      if (amount <= 0 || amount > charge.amount - charge.amount_refunded) {
        return {
          status: 400,
          body: {
            error: { type: "invalid_request_error", message: "The refund is more than what is left of the charge" }
          }
        }
      }
      return { status: 200, body: refundCharge(charge, amount) }
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
        id: newId("cs_test"),
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
        created: clock(),
        expires_at: clock() + 24 * 3600,
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

  const receiptPage = (chargeId: string): Page => {
    const charge = charges.get(chargeId)
    if (charge === undefined) return receipt.missing()
    return receipt.view({
      amount: `${(charge.amount / 100).toFixed(2)} ${charge.currency.toUpperCase()}`,
      card: charge.payment_method_details.card,
      refunded: `${(charge.amount_refunded / 100).toFixed(2)} ${charge.currency.toUpperCase()}`
    })
  }

  /** The hosted pages a browser opens (checkout, portal, receipts); undefined for an API path. */
  const pageFor = (method: string, path: string, form: Record<string, any>): Page | undefined => {
    const [kind, sub, pageId] = path.split("/").filter((s) => s !== "")
    if (kind === "c" && sub === "pay" && pageId !== undefined) {
      const session = checkoutSessions.get(pageId)
      const returnsTo = session === undefined
        ? []
        : [...new Set([session.success_url, session.cancel_url].map((address) => new URL(address).origin))]
      return { ...hosted(method, pageId, form), returnsTo }
    }
    if (kind === "p" && sub === "session" && pageId !== undefined) {
      return billing.portal(method, pageId, form, (number) => cardByNumber(number)?.token)
    }
    if (kind === "receipts" && sub !== undefined && method === "GET") return receiptPage(sub)
    if (kind === "invoices" && sub !== undefined && method === "GET") return billing.invoicePage(sub)
    return undefined
  }

  /** Renewals and retries that came due by the emulator's clock; answers the events they made. */
  const advanceClock = (seconds: number) => {
    const before = events.length
    clockOffset += seconds
    billing.renewDue()
    return events.slice(before)
  }

  const server = http.createServer((req, res) => {
    const chunks: Array<Buffer> = []
    req.on("data", (chunk: Buffer) => chunks.push(chunk))
    req.on("end", async () => {
      const url = new URL(req.url ?? "/", "http://emulator")
      const sent = Buffer.concat(chunks).toString("utf8")
      // The library sends the parameters of a GET (and a DELETE) in the query string.
      const body = req.method === "GET" || (req.method === "DELETE" && sent === "") ? url.search.slice(1) : sent
      const line = `${req.method} ${url.pathname}`
      const key = req.headers["idempotency-key"] as string | undefined
      requests.push({ line, idempotencyKey: key })
      // A browser on a hosted page asks for the icon: there is none, and that is no error.
      if (url.pathname === "/favicon.ico") return void res.writeHead(204).end()
      const html = pageFor(req.method ?? "GET", url.pathname, parseForm(body))
      if (html !== undefined) {
        res.writeHead(html.status, pageHeaders(html))
        return void res.end(html.html ?? "")
      }
      const troubleIndex = troubles.findIndex((t) => line.startsWith(t.prefix))
      if (troubleIndex >= 0) {
        const [trouble] = troubles.splice(troubleIndex, 1)
        if (trouble!.mode === "hang") return void hanging.add(res)
        if (trouble!.mode === "500") {
          res.writeHead(500, { "content-type": "application/json", "request-id": newId("req") })
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
          "request-id": newId("req"),
          "stripe-version": apiVersion
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
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject)
    server.listen(options.port ?? 0, "127.0.0.1", resolve)
  })
  const port = (server.address() as { port: number }).port
  const url = `http://127.0.0.1:${port}`
  baseUrl = url
  const browser = new Stripe(EMULATOR_PUBLISHABLE_KEY, {
    apiVersion: apiVersion as Stripe.LatestApiVersion,
    host: "127.0.0.1",
    port,
    protocol: "http",
    maxNetworkRetries: 0
  })

  const renewals = options.renewEveryMs === undefined
    ? undefined
    : setInterval(() => billing.renewDue(), options.renewEveryMs).unref()

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
    charges,
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
      refundCharge(chargeOf(paymentIntentId), amount)
      return events[events.length - 1]!
    },
    dispute: (paymentIntentId, amount) => {
      const charge = chargeOf(paymentIntentId)
      charge.disputed = true
      const dispute = {
        id: newId("dp"),
        object: "dispute",
        amount,
        charge: charge.id,
        payment_intent: paymentIntentId,
        currency: charge.currency,
        reason: "fraudulent",
        status: "needs_response",
        created: clock(),
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
    payCheckout: async (pageUrl, cardNumber, authentication = "complete") => {
      const post = async (form: Record<string, string>) => {
        const response = await fetch(pageUrl, {
          method: "POST",
          headers: { "content-type": "application/x-www-form-urlencoded" },
          body: new URLSearchParams(form).toString(),
          redirect: "manual"
        })
        return { status: response.status, location: response.headers.get("location"), text: await response.text() }
      }
      const first = await post({ card_number: cardNumber })
      // The 3-D Secure step: the holder completes (or fails) it, as on the bank's page.
      return first.text.includes(`name="three_d_secure"`)
        ? post({ card_number: cardNumber, three_d_secure: authentication })
        : first
    },
    expireCheckout: (sessionId) => {
      const session = checkoutSessions.get(sessionId)
      if (session === undefined || session.status !== "open") throw new Error(`${sessionId} is not open`)
      return expire(session)
    },
    subscriptions: billing.subscriptions,
    invoices: billing.invoices,
    prices: billing.prices,
    advanceClock,
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
    deliver: (target, event, secret = EMULATOR_WEBHOOK_SECRET) => deliverEvent(target, event, secret),
    delivered: log.delivered,
    count: (prefix) => requests.filter((r) => r.line.startsWith(prefix)).length,
    close: async () => {
      if (renewals !== undefined) clearInterval(renewals)
      log.close()
      for (const res of hanging) res.destroy()
      await new Promise<void>((resolve) => server.close(() => resolve()))
    }
  }
}
