import { afterAll, beforeAll, describe, expect, it } from "vitest"
import type { OrgId } from "../../src/Domain/Ids.js"
import { addMember, seedUser } from "../support/fixtures.js"
import { call, eventually, grantTrial, startWorld, type World } from "../support/world.js"
import { newOrg, webhookUrl } from "./support.js"

/**
 * Adding or replacing the saved card on the hosted page (Checkout in `mode: setup`, nothing
 * charged), with Stripe and in the sandbox: the card is kept from the return or from
 * `checkout.session.completed`, and auto-reload then charges it off-session.
 */
let stripe: World
let sandbox: World

beforeAll(async () => {
  stripe = await startWorld("billing_card_setup", { stripe: true })
  sandbox = await startWorld("billing_card_setup_sandbox")
})

afterAll(async () => {
  await stripe?.close()
  await sandbox?.close()
})

const post = (world: World, token: string, path: string, body?: unknown) =>
  call(world, "POST", path, { token, ...(body === undefined ? {} : { body }) })

/** Submits the hosted page's form (the emulator's, with keys or in the sandbox). */
const submit = async (pageUrl: string, cardNumber: string) => {
  const response = await fetch(pageUrl, {
    method: "POST",
    headers: { "content-type": "application/x-www-form-urlencoded" },
    body: new URLSearchParams({ card_number: cardNumber }).toString(),
    redirect: "manual"
  })
  return { status: response.status, location: response.headers.get("location"), text: await response.text() }
}

const reloadsOnce = async (world: World, orgId: string, token: string) => {
  // A new org's trial credits open its balance, as signing up does.
  await grantTrial(world, orgId as OrgId)
  const on = await call(world, "PUT", `/v1/orgs/${orgId}/billing/auto-reload`, {
    token,
    body: { enabled: true, threshold_credits: 1_000_000, amount_credits: 10_000, monthly_limit_credits: 10_000 }
  })
  expect(on.status, JSON.stringify(on.json)).toBe(200)
  return eventually(async () => {
    const rows = await world.db.query(
      `SELECT status, card_last4 FROM payments WHERE org_id = $1 AND purpose = 'auto_reload' AND status = 'succeeded'`,
      [orgId]
    )
    return rows.length > 0 ? rows : undefined
  }, { what: "auto-reload to charge the saved card" })
}

describe("saving a card on Stripe's hosted page", () => {
  it("refuses a declined card, keeps a good one from the return, and auto-reload charges it off-session", async () => {
    const org = await newOrg(stripe)
    const started = await post(stripe, org.owner.sessionToken, `/v1/orgs/${org.orgId}/billing/card/setup`)
    expect(started.status).toBe(201)
    const sessionId = new URL(started.json.checkout_url).pathname.split("/").pop()!
    const session = stripe.stripe.checkoutSessions.get(sessionId)!
    expect(session).toMatchObject({
      mode: "setup",
      currency: "usd",
      customer: expect.stringMatching(/^cus_/),
      metadata: { org_id: org.orgId },
      success_url: `${stripe.server.baseUrl}/dashboard/orgs/${org.orgId}/billing?card_setup={CHECKOUT_SESSION_ID}`
    })
    const declined = await submit(started.json.checkout_url, "4000000000000002")
    expect(declined.text).toContain("Your card was declined.")
    const early = await post(stripe, org.owner.sessionToken, `/v1/orgs/${org.orgId}/billing/card/setup/confirm`)
    expect(early.json).toMatchObject({ status: "open", card: null })

    const saved = await submit(started.json.checkout_url, "5555 5555 5555 4444")
    expect(saved.location).toBe(session.success_url.replace("{CHECKOUT_SESSION_ID}", sessionId))
    const back = await post(stripe, org.owner.sessionToken, `/v1/orgs/${org.orgId}/billing/card/setup/confirm`)
    expect(back.json).toMatchObject({ status: "saved", card: { brand: "mastercard", last4: "4444" } })
    const [reload] = await reloadsOnce(stripe, org.orgId, org.owner.sessionToken)
    expect(reload).toMatchObject({ card_last4: "4444" })

    // Forgotten, the card stays forgotten even if the owner's last return is asked again.
    const removed = await call(stripe, "DELETE", `/v1/orgs/${org.orgId}/billing/card`, {
      token: org.owner.sessionToken
    })
    expect(removed.status).toBe(200)
    const again = await post(stripe, org.owner.sessionToken, `/v1/orgs/${org.orgId}/billing/card/setup/confirm`)
    expect(again.json).toMatchObject({ status: "none", card: null })
  })

  it("keeps the card from checkout.session.completed when the owner never comes back; members may not start one", async () => {
    const org = await newOrg(stripe)
    const member = await seedUser(stripe.db, { phoneVerified: true })
    await addMember(stripe.db, org.orgId, member.userId, "member")
    expect((await post(stripe, member.sessionToken, `/v1/orgs/${org.orgId}/billing/card/setup`)).status).toBe(403)

    const started = await post(stripe, org.owner.sessionToken, `/v1/orgs/${org.orgId}/billing/card/setup`)
    expect((await submit(started.json.checkout_url, "4242424242424242")).status).toBe(303)
    const sessionId = new URL(started.json.checkout_url).pathname.split("/").pop()!
    const completed = stripe.stripe.lastEvent("checkout.session.completed", sessionId)
    expect((await stripe.stripe.deliver(webhookUrl(stripe), completed)).status).toBe(200)
    const summary = await call(stripe, "GET", `/v1/orgs/${org.orgId}/billing`, { token: org.owner.sessionToken })
    expect(summary.json.card).toMatchObject({ brand: "visa", last4: "4242", exp_month: 12, exp_year: 2034 })
  })
})

describe("saving a card in the sandbox", () => {
  it("on the emulator's page, keeps the card, and auto-reload charges it", async () => {
    const org = await newOrg(sandbox)
    const started = await post(sandbox, org.owner.sessionToken, `/v1/orgs/${org.orgId}/billing/card/setup`)
    expect(started.status).toBe(201)
    expect(started.json.checkout_url).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/c\/pay\/cs_test_/)
    const page = await fetch(started.json.checkout_url).then((r) => r.text())
    expect(page).toContain("Save the card")
    expect(page).toContain("Sandbox checkout")
    expect((await submit(started.json.checkout_url, "4000 0000 0000 0002")).text).toContain("Your card was declined.")
    const saved = await submit(started.json.checkout_url, "4242 4242 4242 4242")
    expect(saved.status).toBe(303)
    expect(saved.location).toContain(`/dashboard/orgs/${org.orgId}/billing?card_setup=cs_test_`)
    // The page kept the card before the owner is back; the return says so.
    const back = await post(sandbox, org.owner.sessionToken, `/v1/orgs/${org.orgId}/billing/card/setup/confirm`)
    expect(back.json).toMatchObject({ status: "saved", card: { last4: "4242" } })
    await reloadsOnce(sandbox, org.orgId, org.owner.sessionToken)
  })
})
