import { type Behaviour, declineMessages, refuses } from "./cards.js"
import type { StoredEvent } from "./events.js"
import { newId } from "./events.js"
import { asList } from "./forms.js"
import { type Page, portalPage, receipt } from "./pages.js"

/**
 * The emulator's Billing: products, prices (with lookup keys), subscriptions started by
 * Checkout in `mode: subscription`, their invoices, proration on a price change, renewals
 * when the emulator's clock passes a period's end, Stripe's retries of a failed renewal
 * (each later look at the clock is one retry; after the last the subscription is
 * cancelled, `cancellation_details.reason: payment_failed`), and the customer portal with
 * a page of its own (the card on file, replacing or removing it, invoices, cancelling).
 * Every change emits the event Stripe would, with Stripe's object shapes of API version
 * 2025-03-31 and later (the period on the subscription's items, an invoice's subscription
 * under `parent`).
 */
export interface BillingMethod {
  readonly id: string
  customer: string | null
  readonly card: { brand: string; last4: string; exp_month: number; exp_year: number; country: string }
  behaviour: Behaviour
}

interface Price {
  id: string
  object: "price"
  active: boolean
  currency: string
  unit_amount: number
  lookup_key: string | null
  nickname: string | null
  product: string
  recurring: { interval: string; interval_count: number }
  type: "recurring"
  livemode: false
}

export interface Subscription {
  id: string
  object: "subscription"
  status: string
  customer: string
  items: {
    object: "list"
    data: Array<
      {
        id: string
        object: "subscription_item"
        price: Price
        quantity: number
        current_period_start: number
        current_period_end: number
      }
    >
  }
  cancellation_details: { reason: string | null; comment: string | null; feedback: null }
  default_payment_method: string | null
  latest_invoice: string | null
  metadata: Record<string, string>
  description: string | null
  cancel_at_period_end: false
  created: number
  livemode: false
}

export interface Invoice {
  id: string
  object: "invoice"
  status: "paid" | "open"
  billing_reason: string
  amount_due: number
  amount_paid: number
  currency: string
  attempted: boolean
  attempt_count: number
  /** When Stripe tries a failed renewal again (its retries, three days apart here). */
  next_payment_attempt: number | null
  customer: string
  hosted_invoice_url: string
  parent: {
    type: "subscription_details"
    quote_details: null
    subscription_details: { subscription: string; metadata: Record<string, string> }
  }
  last_finalization_error: null
  created: number
  livemode: false
}

export interface BillingDeps {
  readonly emit: (type: string, object: unknown) => StoredEvent
  readonly methodFor: (token: string, customer: string | null) => BillingMethod | undefined
  readonly method: (id: string) => BillingMethod | undefined
  /** The emulator's clock, in seconds (moved by `advanceClock`). */
  readonly clock: () => number
  /** Where the emulator's pages are served. */
  readonly baseUrl: () => string
}

/** The pause before Stripe tries a failed renewal again. */
const RETRY_GAP_SECONDS = 3 * 24 * 3600

/** The same instant a calendar month later (Stripe's monthly billing anchor). */
const addMonth = (seconds: number) => {
  const date = new Date(seconds * 1000)
  date.setUTCMonth(date.getUTCMonth() + 1)
  return Math.floor(date.getTime() / 1000)
}

const publicMethod = (pm: BillingMethod) => ({
  id: pm.id,
  object: "payment_method",
  type: "card",
  customer: pm.customer,
  card: pm.card
})

export const billing = (deps: BillingDeps) => {
  const products = new Map<string, Record<string, unknown>>()
  const prices = new Map<string, Price>()
  const subscriptions = new Map<string, Subscription>()
  const invoices = new Map<string, Invoice>()
  const portalSessions = new Map<string, { id: string; customer: string; return_url: string; url: string }>()
  const customerDefaults = new Map<string, string>()
  /** After this many failed tries of a renewal Stripe gives up (the first try and three retries). */
  let maxAttempts = 4

  const snapshot = <A>(object: A): A => JSON.parse(JSON.stringify(object))

  const subscriptionOf = (invoice: Invoice) => subscriptions.get(invoice.parent.subscription_details.subscription)!

  /** Charges an invoice on the subscription's card: paid, or open with one more attempt. */
  const charge = (invoice: Invoice, offSession: boolean) => {
    const sub = subscriptionOf(invoice)
    const pm = sub.default_payment_method === null ? undefined : deps.method(sub.default_payment_method)
    const fails = pm === undefined || refuses(pm.behaviour, offSession)
    invoice.attempted = true
    invoice.attempt_count += 1
    if (fails) {
      invoice.next_payment_attempt = invoice.attempt_count < maxAttempts ? deps.clock() + RETRY_GAP_SECONDS : null
      deps.emit("invoice.payment_failed", snapshot(invoice))
      return false
    }
    invoice.next_payment_attempt = null
    invoice.status = "paid"
    invoice.amount_paid = invoice.amount_due
    deps.emit("invoice.paid", snapshot(invoice))
    return true
  }

  const newInvoice = (sub: Subscription, reason: string, amount: number): Invoice => {
    const invoice: Invoice = {
      id: newId("in"),
      object: "invoice",
      status: "open",
      billing_reason: reason,
      amount_due: amount,
      amount_paid: 0,
      currency: "usd",
      attempted: false,
      attempt_count: 0,
      next_payment_attempt: null,
      customer: sub.customer,
      hosted_invoice_url: "",
      parent: {
        type: "subscription_details",
        quote_details: null,
        subscription_details: { subscription: sub.id, metadata: sub.metadata }
      },
      last_finalization_error: null,
      created: deps.clock(),
      livemode: false
    }
    invoice.hosted_invoice_url = `${deps.baseUrl()}/invoices/${invoice.id}`
    invoices.set(invoice.id, invoice)
    sub.latest_invoice = invoice.id
    return invoice
  }

  const ended = (sub: Subscription) => sub.status === "canceled" || sub.status === "incomplete_expired"

  const cancel = (sub: Subscription, reason: "cancellation_requested" | "payment_failed") => {
    sub.status = "canceled"
    sub.cancellation_details = { ...sub.cancellation_details, reason }
    return deps.emit("customer.subscription.deleted", snapshot(sub))
  }

  const expandedSubscription = (sub: Subscription, expand: Array<string>) => {
    const pm = sub.default_payment_method === null ? undefined : deps.method(sub.default_payment_method)
    return {
      ...sub,
      default_payment_method: expand.includes("default_payment_method") && pm !== undefined
        ? publicMethod(pm)
        : sub.default_payment_method
    }
  }

  /**
   * The customer pays a subscription's checkout: its first month is charged (the customer is
   * there, so a card needing authentication gets it); answers the subscription, or the
   * decline's message.
   */
  const subscribe = (
    session: { customer: string | null; priceId: string; metadata: Record<string, string>; description: string | null },
    pm: BillingMethod
  ): { subscription: Subscription } | { error: string } => {
    if (pm.behaviour === "declined" || pm.behaviour === "insufficient_funds") {
      return { error: declineMessages[pm.behaviour] }
    }
    const price = prices.get(session.priceId)!
    const start = deps.clock()
    pm.customer = session.customer
    const sub: Subscription = {
      id: newId("sub"),
      object: "subscription",
      status: "active",
      customer: session.customer ?? "",
      items: {
        object: "list",
        data: [{
          id: newId("si"),
          object: "subscription_item",
          price,
          quantity: 1,
          current_period_start: start,
          current_period_end: addMonth(start)
        }]
      },
      cancellation_details: { reason: null, comment: null, feedback: null },
      default_payment_method: pm.id,
      latest_invoice: null,
      metadata: session.metadata,
      description: session.description,
      cancel_at_period_end: false,
      created: start,
      livemode: false
    }
    subscriptions.set(sub.id, sub)
    const invoice = newInvoice(sub, "subscription_create", price.unit_amount)
    deps.emit("customer.subscription.created", snapshot(sub))
    charge(invoice, false)
    return { subscription: sub }
  }

  /** Renewals and retries due at the emulator's clock; answers how many invoices were tried. */
  const renewDue = () => {
    let tried = 0
    for (const sub of subscriptions.values()) {
      if (ended(sub) || sub.status === "unpaid") continue
      const item = sub.items.data[0]!
      const open = sub.latest_invoice === null ? undefined : invoices.get(sub.latest_invoice)
      if (sub.status === "past_due" && open !== undefined && open.status === "open") {
        // Stripe's retries: the next try once its time came.
        if (open.next_payment_attempt === null || open.next_payment_attempt > deps.clock()) continue
        tried++
        if (charge(open, true)) {
          sub.status = "active"
          deps.emit("customer.subscription.updated", snapshot(sub))
        } else if (open.attempt_count >= maxAttempts) {
          cancel(sub, "payment_failed")
        }
        continue
      }
      if (item.current_period_end > deps.clock()) continue
      item.current_period_start = item.current_period_end
      item.current_period_end = addMonth(item.current_period_end)
      const invoice = newInvoice(sub, "subscription_cycle", item.price.unit_amount)
      tried++
      if (!charge(invoice, true)) sub.status = "past_due"
      deps.emit("customer.subscription.updated", snapshot(sub))
    }
    return tried
  }

  type Answer = { status: number; body: unknown }
  const notFound = (what: string): Answer => ({
    status: 404,
    body: { error: { type: "invalid_request_error", code: "resource_missing", message: `No such ${what}` } }
  })
  /** The Billing part of the API; undefined for a path that is not one of its. */
  const route = (method: string, segments: Array<string>, form: Record<string, any>): Answer | undefined => {
    const [v1, kind, objectId, verb] = segments
    if (v1 !== "v1") return undefined
    if (kind === "products" && method === "POST" && objectId === undefined) {
      const product = {
        id: newId("prod"),
        object: "product",
        name: form.name,
        metadata: form.metadata ?? {},
        active: true
      }
      products.set(product.id, product)
      return { status: 200, body: product }
    }
    if (kind === "prices" && method === "POST" && objectId === undefined) {
      if (!products.has(form.product)) return notFound("product")
      const lookupKey = form.lookup_key ?? null
      if (lookupKey !== null && [...prices.values()].some((p) => p.lookup_key === lookupKey)) {
        return {
          status: 400,
          body: { error: { type: "invalid_request_error", message: `A price with lookup key ${lookupKey} exists` } }
        }
      }
      const price: Price = {
        id: newId("price"),
        object: "price",
        active: true,
        currency: String(form.currency),
        unit_amount: Number(form.unit_amount),
        lookup_key: lookupKey,
        nickname: form.nickname ?? null,
        product: String(form.product),
        recurring: { interval: form.recurring?.interval ?? "month", interval_count: 1 },
        type: "recurring",
        livemode: false
      }
      prices.set(price.id, price)
      return { status: 200, body: price }
    }
    if (kind === "prices" && method === "GET" && objectId === undefined) {
      const keys = asList(form.lookup_keys)
      const data = [...prices.values()].filter((p) =>
        p.active && (keys.length === 0 || keys.includes(p.lookup_key ?? ""))
      )
      return { status: 200, body: { object: "list", data, has_more: false, url: "/v1/prices" } }
    }
    if (kind === "subscriptions" && objectId !== undefined) {
      const sub = subscriptions.get(objectId)
      if (sub === undefined) return notFound("subscription")
      if (method === "GET") return { status: 200, body: expandedSubscription(sub, asList(form.expand)) }
      if (method === "DELETE") {
        if (!ended(sub)) {
          sub.cancellation_details.comment = form.cancellation_details?.comment ?? null
          cancel(sub, "cancellation_requested")
        }
        return { status: 200, body: expandedSubscription(sub, asList(form.expand)) }
      }
      if (method === "POST" && verb === undefined) {
        if (ended(sub)) {
          return {
            status: 400,
            body: {
              error: { type: "invalid_request_error", message: "A canceled subscription can only update its metadata" }
            }
          }
        }
        const change = asList(form.items)[0] as unknown as { id?: string; price?: string } | undefined
        const price = change?.price === undefined ? undefined : prices.get(change.price)
        if (price === undefined) return notFound("price")
        const item = sub.items.data[0]!
        const old = item.price
        item.price = price
        const now = deps.clock()
        const left = Math.max(item.current_period_end - now, 0)
        const whole = Math.max(item.current_period_end - item.current_period_start, 1)
        const prorated = Math.round((price.unit_amount - old.unit_amount) * left / whole)
        if (form.proration_behavior === "always_invoice" && prorated > 0) {
          const invoice = newInvoice(sub, "subscription_update", prorated)
          if (!charge(invoice, true)) sub.status = "past_due"
        }
        deps.emit("customer.subscription.updated", snapshot(sub))
        return { status: 200, body: expandedSubscription(sub, asList(form.expand)) }
      }
    }
    if (kind === "invoices" && method === "GET" && objectId !== undefined) {
      const invoice = invoices.get(objectId)
      return invoice === undefined ? notFound("invoice") : { status: 200, body: invoice }
    }
    if (kind === "billing_portal" && objectId === "sessions" && method === "POST") {
      const session = {
        id: newId("bps"),
        customer: String(form.customer),
        return_url: String(form.return_url),
        url: ""
      }
      session.url = `${deps.baseUrl()}/p/session/${session.id}`
      portalSessions.set(session.id, session)
      return { status: 200, body: { object: "billing_portal.session", livemode: false, ...session } }
    }
    if (kind === "customers" && method === "GET" && objectId !== undefined) {
      const defaultId = customerDefaults.get(objectId) ?? null
      const pm = defaultId === null ? undefined : deps.method(defaultId)
      const expand = asList(form.expand).includes("invoice_settings.default_payment_method")
      return {
        status: 200,
        body: {
          id: objectId,
          object: "customer",
          invoice_settings: { default_payment_method: expand && pm !== undefined ? publicMethod(pm) : defaultId },
          livemode: false
        }
      }
    }
    return undefined
  }

  /** The customer's card on file: its default card, else its subscription's, while it is attached to it. */
  const cardOnFile = (customer: string, live: ReadonlyArray<Subscription>) => {
    const pmId = customerDefaults.get(customer) ?? live[0]?.default_payment_method ?? null
    const pm = pmId === null ? undefined : deps.method(pmId)
    return pm === undefined || pm.customer !== customer ? undefined : pm
  }

  /** The portal's page: the plan, the card on file and the invoices; its forms act on them. */
  const portal = (
    method: string,
    sessionId: string,
    form: Record<string, any>,
    cardToken: (number: string) => string | undefined
  ): Page => {
    const session = portalSessions.get(sessionId)
    if (session === undefined) return portalPage.missing()
    const liveOf = () => [...subscriptions.values()].filter((s) => s.customer === session.customer && !ended(s))
    let notice: string | null = null
    let failure: string | null = null
    if (method === "POST" && form.action === "cancel") {
      for (const sub of liveOf()) cancel(sub, "cancellation_requested")
      notice = "The subscription is cancelled."
    } else if (method === "POST" && form.action === "card") {
      const token = cardToken(String(form.card_number ?? ""))
      const pm = token === undefined ? undefined : deps.methodFor(token, session.customer)
      if (pm === undefined) {
        failure = "Your card number is invalid."
      } else if (pm.behaviour === "declined" || pm.behaviour === "insufficient_funds") {
        failure = declineMessages[pm.behaviour]
      } else {
        pm.customer = session.customer
        deps.emit("payment_method.attached", publicMethod(pm))
        customerDefaults.set(session.customer, pm.id)
        for (const sub of liveOf()) sub.default_payment_method = pm.id
        deps.emit("customer.updated", {
          id: session.customer,
          object: "customer",
          invoice_settings: { default_payment_method: pm.id },
          livemode: false
        })
        notice = `The card ending ${pm.card.last4} is now the card on file.`
      }
    } else if (method === "POST" && form.action === "remove_card") {
      // As Stripe's portal: the card on file is detached from the customer.
      const pm = cardOnFile(session.customer, liveOf())
      if (pm === undefined) {
        failure = "No card to remove."
      } else {
        pm.customer = null
        customerDefaults.delete(session.customer)
        deps.emit("payment_method.detached", publicMethod(pm))
        notice = `The card ending ${pm.card.last4} was removed.`
      }
    }
    const live = liveOf()
    return portalPage.view({
      notice,
      failure,
      card: cardOnFile(session.customer, live)?.card ?? null,
      plans: live.map((s) => ({ name: s.items.data[0]!.price.nickname ?? "Plan", status: s.status })),
      invoices: [...invoices.values()].filter((i) => i.customer === session.customer && i.amount_due > 0).map((i) => ({
        amount: (i.amount_due / 100).toFixed(2),
        status: i.status,
        url: i.hosted_invoice_url
      })),
      returnUrl: session.return_url
    })
  }
  return {
    prices,
    subscriptions,
    invoices,
    subscribe,
    renewDue,
    route,
    portal,
    /** An invoice's hosted page (its receipt once paid). */
    invoicePage: (invoiceId: string): Page => {
      const invoice = invoices.get(invoiceId)
      return invoice === undefined ? receipt.missing() : receipt.view({
        amount: `${(invoice.amount_due / 100).toFixed(2)} ${invoice.currency.toUpperCase()}`,
        card: null,
        refunded: null,
        status: invoice.status
      })
    },
    setMaxAttempts: (attempts: number) => void (maxAttempts = attempts),
    /** Stripe's default card of a customer, as the portal sets it. */
    customerDefaults
  }
}
