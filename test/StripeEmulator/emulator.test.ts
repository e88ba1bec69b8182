import {
  EMULATOR_PUBLISHABLE_KEY,
  EMULATOR_SECRET_KEY,
  EMULATOR_WEBHOOK_SECRET,
  startStripeEmulator,
  type StripeEmulator
} from "@agent-gateway/stripe-emulator"
import * as http from "node:http"
import Stripe from "stripe"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { STRIPE_API_VERSION } from "../../src/Services/Billing/StripeProvider.js"
import { eventually } from "../support/world.js"

/**
 * The Stripe API emulator driven by the official library, as the service drives it: the
 * objects and errors it answers, its hosted pages (marked, no script, the 3-D Secure step),
 * Billing on its movable clock, the portal, refunds, and events signed so that the
 * library's own `constructEvent` accepts them, delivered to a webhook endpoint.
 */
let emulator: StripeEmulator
let stripe: Stripe
let browser: Stripe

const client = (key: string, url: string) => {
  const address = new URL(url)
  return new Stripe(key, {
    apiVersion: STRIPE_API_VERSION,
    host: address.hostname,
    port: Number(address.port),
    protocol: "http",
    maxNetworkRetries: 0
  })
}

beforeAll(async () => {
  emulator = await startStripeEmulator()
  stripe = client(EMULATOR_SECRET_KEY, emulator.url)
  browser = client(EMULATOR_PUBLISHABLE_KEY, emulator.url)
})

afterAll(async () => {
  await emulator?.close()
})

const checkout = (params: Partial<Stripe.Checkout.SessionCreateParams> = {}) =>
  stripe.checkout.sessions.create({
    mode: "payment",
    line_items: [{
      quantity: 1,
      price_data: { currency: "usd", unit_amount: 2_000, product_data: { name: "Credits" } }
    }],
    success_url: "http://127.0.0.1:1/back?session_id={CHECKOUT_SESSION_ID}",
    cancel_url: "http://127.0.0.1:1/cancelled",
    metadata: { payment_id: "ours" },
    ...params
  } as Stripe.Checkout.SessionCreateParams)

describe("the API through the official library", () => {
  it("makes and confirms a PaymentIntent, refuses a declined card as Stripe does, and keeps idempotency keys", async () => {
    const pi = await stripe.paymentIntents.create(
      { amount: 2_000, currency: "usd", metadata: { payment_id: "p1" } },
      { idempotencyKey: "key-1" }
    )
    expect(pi).toMatchObject({ object: "payment_intent", status: "requires_payment_method", amount: 2_000 })
    const again = await stripe.paymentIntents.create(
      { amount: 2_000, currency: "usd", metadata: { payment_id: "p1" } },
      { idempotencyKey: "key-1" }
    )
    expect(again.id).toBe(pi.id)
    await expect(
      stripe.paymentIntents.create({ amount: 3_000, currency: "usd" }, { idempotencyKey: "key-1" })
    ).rejects.toBeInstanceOf(Stripe.errors.StripeIdempotencyError)

    const declined = await browser.paymentIntents
      .confirm(pi.id, { client_secret: pi.client_secret, payment_method: "pm_card_chargeDeclined" } as any)
      .catch((error: unknown) => error)
    expect(declined).toBeInstanceOf(Stripe.errors.StripeCardError)
    expect((declined as Stripe.errors.StripeCardError).code).toBe("card_declined")

    await browser.paymentIntents.confirm(
      pi.id,
      { client_secret: pi.client_secret, payment_method: "pm_card_visa" } as any
    )
    const paid = await stripe.paymentIntents.retrieve(pi.id, { expand: ["latest_charge", "payment_method"] })
    expect(paid.status).toBe("succeeded")
    const charge = paid.latest_charge as Stripe.Charge
    expect(charge.payment_method_details?.card).toMatchObject({ brand: "visa", last4: "4242" })
    expect(charge.receipt_url).toMatch(new RegExp(`^${emulator.url}/receipts/ch_`))
    expect(await (await fetch(charge.receipt_url!)).text()).toContain("Receipt: 20.00 USD")

    const refund = await stripe.refunds.create({ payment_intent: pi.id, amount: 500 })
    expect(refund).toMatchObject({ object: "refund", amount: 500 })
    expect(emulator.events.map((e) => e.type)).toEqual(
      expect.arrayContaining(["payment_intent.payment_failed", "payment_intent.succeeded", "charge.refunded"])
    )
  })

  it("charges a saved card off-session, and a card that needs its holder fails there", async () => {
    const customer = await stripe.customers.create({ description: "Org" })
    const failed = await stripe.paymentIntents.create({
      amount: 1_000,
      currency: "usd",
      customer: customer.id,
      payment_method: "pm_card_authenticationRequired",
      off_session: true,
      confirm: true
    }).catch((error: unknown) => error)
    expect(failed).toBeInstanceOf(Stripe.errors.StripeCardError)
    expect((failed as Stripe.errors.StripeCardError).code).toBe("authentication_required")
  })

  it("answers Stripe's error for an unknown key and an unknown object", async () => {
    await expect(client("sk_test_wrong", emulator.url).customers.create({})).rejects.toBeInstanceOf(
      Stripe.errors.StripeAuthenticationError
    )
    await expect(stripe.paymentIntents.retrieve("pi_nope")).rejects.toMatchObject({ code: "resource_missing" })
  })
})

describe("the hosted checkout page", () => {
  const post = (url: string, form: Record<string, string>) =>
    fetch(url, {
      method: "POST",
      headers: { "content-type": "application/x-www-form-urlencoded" },
      body: new URLSearchParams(form).toString(),
      redirect: "manual"
    })

  it("is marked as a sandbox, runs no script, and takes a test card back to the success address", async () => {
    const session = await checkout()
    expect(session.url).toBe(`${emulator.url}/c/pay/${session.id}`)
    const page = await fetch(session.url!)
    expect(page.headers.get("content-security-policy")).toContain("default-src 'none'")
    // The form's answer redirects to the return address: the browser must be allowed to follow.
    expect(page.headers.get("content-security-policy")).toContain("form-action 'self' http://127.0.0.1:1;")
    const html = await page.text()
    expect(html).toContain("Sandbox checkout: development only, no money moves.")
    expect(html).toContain("Pay 20.00 USD")
    expect(html).not.toContain("<script")

    const declined = await post(session.url!, { card_number: "4000 0000 0000 9995" })
    expect(declined.status).toBe(200)
    expect(await declined.text()).toContain("Your card has insufficient funds.")
    const paid = await post(session.url!, { card_number: "4242 4242 4242 4242" })
    expect(paid.status).toBe(303)
    expect(paid.headers.get("location")).toBe(`http://127.0.0.1:1/back?session_id=${session.id}`)
    const done = await stripe.checkout.sessions.retrieve(session.id)
    expect(done).toMatchObject({ status: "complete", payment_status: "paid" })
    expect(emulator.lastEvent("checkout.session.completed", session.id).type).toBe("checkout.session.completed")
  })

  it("asks for 3-D Secure with 4000 0027 6000 3184: a failed step refuses, a completed one pays", async () => {
    const session = await checkout()
    const challenge = await post(session.url!, { card_number: "4000 0027 6000 3184" })
    const html = await challenge.text()
    expect(html).toContain("3-D Secure authentication")
    expect(html).toContain("Complete authentication")
    expect((await stripe.checkout.sessions.retrieve(session.id)).status).toBe("open")

    const failed = await post(session.url!, { card_number: "4000002760003184", three_d_secure: "fail" })
    expect(await failed.text()).toContain("We are unable to authenticate your payment method.")
    const intent = (await stripe.checkout.sessions.retrieve(session.id)).payment_intent as string
    expect((await stripe.paymentIntents.retrieve(intent)).last_payment_error?.code).toBe(
      "payment_intent_authentication_failure"
    )

    const paid = await post(session.url!, { card_number: "4000002760003184", three_d_secure: "complete" })
    expect(paid.status).toBe(303)
    expect((await stripe.paymentIntents.retrieve(intent)).status).toBe("succeeded")
  })

  it("saves a card in setup mode, and an expired session takes no card", async () => {
    const customer = await stripe.customers.create({})
    const setup = await stripe.checkout.sessions.create({
      mode: "setup",
      currency: "usd",
      customer: customer.id,
      success_url: "http://127.0.0.1:1/back",
      cancel_url: "http://127.0.0.1:1/cancelled"
    })
    expect(await (await fetch(setup.url!)).text()).toContain("Save the card")
    expect((await emulator.payCheckout(setup.url!, "5555 5555 5555 4444")).status).toBe(303)
    const saved = await stripe.checkout.sessions.retrieve(setup.id)
    const intent = await stripe.setupIntents.retrieve(saved.setup_intent as string, { expand: ["payment_method"] })
    expect((intent.payment_method as Stripe.PaymentMethod).card).toMatchObject({ brand: "mastercard", last4: "4444" })

    const session = await checkout()
    await stripe.checkout.sessions.expire(session.id)
    const after = await post(session.url!, { card_number: "4242424242424242" })
    expect(after.status).toBe(410)
    expect(await after.text()).toContain("This checkout has ended")
  })
})

describe("Billing on the emulator's clock, and the portal", () => {
  const DAY = 24 * 3600

  const subscribe = async (card: string) => {
    const customer = await stripe.customers.create({})
    const product = await stripe.products.create({ name: "Pro" })
    const price = await stripe.prices.create({
      product: product.id,
      currency: "usd",
      unit_amount: 9_900,
      recurring: { interval: "month" },
      nickname: "Pro"
    })
    const session = await checkout({
      mode: "subscription",
      customer: customer.id,
      line_items: [{ quantity: 1, price: price.id }],
      subscription_data: { metadata: { org_id: "org" } }
    })
    expect(await (await fetch(session.url!)).text()).toContain("Subscribe: 99.00 USD a month")
    expect((await emulator.payCheckout(session.url!, card)).status).toBe(303)
    const done = await stripe.checkout.sessions.retrieve(session.id)
    return { customer, subscription: await stripe.subscriptions.retrieve(done.subscription as string) }
  }

  it("renews when the clock passes the month, and retries a refused renewal until it cancels", async () => {
    const paying = await subscribe("4242 4242 4242 4242")
    const renewed = emulator.advanceClock(31 * DAY).filter((e) => e.payload.includes(paying.subscription.id))
    expect(renewed.map((e) => e.type)).toEqual(["invoice.paid", "customer.subscription.updated"])

    // Authenticated at checkout, refused off-session: every renewal try fails.
    const refusing = await subscribe("4000 0027 6000 3184")
    const mine = (events: ReturnType<StripeEmulator["advanceClock"]>) =>
      events.filter((e) => e.payload.includes(refusing.subscription.id)).map((e) => e.type)
    expect(mine(emulator.advanceClock(31 * DAY))).toEqual(["invoice.payment_failed", "customer.subscription.updated"])
    expect((await stripe.subscriptions.retrieve(refusing.subscription.id)).status).toBe("past_due")
    // Retries three days apart, over HTTP as a test in another process moves the clock.
    expect(mine(emulator.advanceClock(1 * DAY))).toEqual([])
    const overHttp = await fetch(`${emulator.url}/_emulator/advance_clock`, {
      method: "POST",
      headers: { authorization: `Bearer ${EMULATOR_SECRET_KEY}`, "content-type": "application/x-www-form-urlencoded" },
      body: "seconds=" + 2 * DAY
    }).then((r) => r.json())
    expect(overHttp.data.map((e: { type: string }) => e.type)).toContain("invoice.payment_failed")
    expect(mine(emulator.advanceClock(3 * DAY))).toEqual(["invoice.payment_failed"])
    expect(mine(emulator.advanceClock(3 * DAY))).toEqual(["invoice.payment_failed", "customer.subscription.deleted"])
    const ended = await stripe.subscriptions.retrieve(refusing.subscription.id)
    expect(ended).toMatchObject({ status: "canceled", cancellation_details: { reason: "payment_failed" } })
  })

  it("shows the card on file in the portal: after replacing 4242 with 4444 it says 4444", async () => {
    const { customer } = await subscribe("4242 4242 4242 4242")
    const portal = await stripe.billingPortal.sessions.create({ customer: customer.id, return_url: "http://x.test/" })
    const before = await (await fetch(portal.url)).text()
    expect(before).toContain("Sandbox billing portal: development only, no money moves.")
    expect(before).toContain("Card on file: visa ending 4242")
    const replaced = await emulator.usePortal(portal.url, { action: "card", card_number: "5555 5555 5555 4444" })
    expect(replaced.text).toContain("The card ending 4444 is now the card on file.")
    const after = await (await fetch(portal.url)).text()
    expect(after).toContain("Card on file: mastercard ending 4444")
    expect(after).not.toContain("ending 4242")
    const stored = await stripe.customers.retrieve(customer.id, { expand: ["invoice_settings.default_payment_method"] })
    expect(((stored as Stripe.Customer).invoice_settings.default_payment_method as Stripe.PaymentMethod).card?.last4)
      .toBe("4444")
  })
})

describe("events delivered to a webhook endpoint", () => {
  it("posts every event, signed so that the library's constructEvent accepts it, retrying a refusal", async () => {
    const received: Array<Stripe.Event> = []
    let refuseFirst = true
    const receiver = http.createServer((req, res) => {
      let body = ""
      req.on("data", (chunk) => (body += chunk))
      req.on("end", () => {
        if (refuseFirst) {
          refuseFirst = false
          res.writeHead(500).end()
          return
        }
        try {
          received.push(
            stripe.webhooks.constructEvent(body, String(req.headers["stripe-signature"]), EMULATOR_WEBHOOK_SECRET)
          )
          res.writeHead(200).end("{}")
        } catch {
          res.writeHead(400).end()
        }
      })
    })
    await new Promise<void>((resolve) => receiver.listen(0, "127.0.0.1", resolve))
    const pushing = await startStripeEmulator({
      webhookUrl: () => `http://127.0.0.1:${(receiver.address() as { port: number }).port}/hook`
    })
    try {
      const api = client(EMULATOR_SECRET_KEY, pushing.url)
      await api.paymentIntents.create({
        amount: 500,
        currency: "usd",
        payment_method: "pm_card_visa",
        confirm: true
      })
      await eventually(() => received.length === 1, { what: "the signed event" })
      expect(received[0]).toMatchObject({ type: "payment_intent.succeeded", api_version: STRIPE_API_VERSION })
      expect(pushing.delivered()).toBe(true)
      const forged = await pushing.deliver(
        `http://127.0.0.1:${(receiver.address() as { port: number }).port}/hook`,
        pushing.events[0]!,
        "whsec_other"
      )
      expect(forged.status).toBe(400)
    } finally {
      await pushing.close()
      await new Promise<void>((resolve) => receiver.close(() => resolve()))
    }
  })
})
