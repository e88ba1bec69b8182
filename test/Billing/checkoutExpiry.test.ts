import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { balanceOf } from "../support/ledgerChecks.js"
import { call, eventually, startWorld, type World } from "../support/world.js"
import { newOrg } from "./support.js"

/**
 * Checkouts nobody finishes: after PAYMENT_EXPIRY_MS the billing sweep expires the session
 * at Stripe and ends the payment, giving back its cap allowance; a session that was paid
 * but never heard of (no return, no webhook) is credited by the same sweep instead.
 */
let world: World

beforeAll(async () => {
  world = await startWorld("billing_checkout_expiry", {
    stripe: true,
    env: { PAYMENT_EXPIRY_MS: "1500", BILLING_WORKER_INTERVAL_MS: "500" }
  })
})

afterAll(async () => {
  await world?.close()
})

const statusOf = async (paymentId: string) =>
  (await world.db.query(`SELECT status FROM payments WHERE id = $1`, [paymentId]))[0]?.status as string

describe("the expiry sweep with Checkout", () => {
  it("expires an unpaid session at Stripe and gives back its cap allowance", async () => {
    const org = await newOrg(world, { createdDaysAgo: 1 })
    const body = { amount_usd: "200" }
    const started = await call(world, "POST", `/v1/orgs/${org.orgId}/billing/checkout`, {
      token: org.owner.sessionToken,
      body
    })
    expect(started.status).toBe(201)
    await eventually(async () => (await statusOf(started.json.payment.id)) === "canceled", {
      what: "the checkout to expire"
    })
    const sessionId = new URL(started.json.checkout_url).pathname.split("/").pop()!
    expect(world.stripe.checkoutSessions.get(sessionId)!.status).toBe("expired")
    const again = await call(world, "POST", `/v1/orgs/${org.orgId}/billing/checkout`, {
      token: org.owner.sessionToken,
      body
    })
    expect(again.status).toBe(201)
  })

  it("credits a session paid at Stripe that nobody reported", async () => {
    const org = await newOrg(world)
    const before = await balanceOf(world.db, org.orgId)
    const started = await call(world, "POST", `/v1/orgs/${org.orgId}/billing/checkout`, {
      token: org.owner.sessionToken,
      body: { credits: 10_000 }
    })
    expect((await world.stripe.payCheckout(started.json.checkout_url, "4242424242424242")).status).toBe(303)
    await eventually(async () => (await statusOf(started.json.payment.id)) === "succeeded", {
      what: "the sweep to credit the paid checkout"
    })
    expect(await balanceOf(world.db, org.orgId)).toBe(before + 10_000n)
  })
})
