import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { bearer, type SeededOrg, seedOrg } from "../support/fixtures.js"
import { balanceOf, expectLedgerInvariant } from "../support/ledgerChecks.js"
import { request } from "../support/server.js"
import { eventually, startWorld, type World } from "../support/world.js"
import { postPage, sandboxEmulatorOf } from "./support.js"

/**
 * Without Stripe keys in development, Buy credits follows the same journey as with Stripe,
 * on the same code: the service starts the Stripe emulator on loopback, whose hosted page
 * (clearly marked, test cards, no script) sends the owner back to the billing page, and
 * whose events reach the service's webhook route signed; the return, the cancel and the cap
 * run as with Stripe.
 */
let dev: World

beforeAll(async () => {
  dev = await startWorld("billing_sandbox_checkout")
})

afterAll(async () => {
  await dev?.close()
})

const api = (org: SeededOrg, path: string, init: { method?: string; body?: unknown } = {}) =>
  request(`${dev.server.url}/v1/orgs/${org.orgId}${path}`, {
    method: init.method ?? "GET",
    headers: bearer(org.owner.sessionToken),
    body: init.body
  })

/** The sandbox page as a browser posts it: a plain form. */
const payOnPage = (pageUrl: string, cardNumber: string) => postPage(pageUrl, { card_number: cardNumber })

describe("the sandbox's checkout page", () => {
  it("is the emulator's, marked as a sandbox, and pays with a test card back to the billing page", async () => {
    const org = await seedOrg(dev.db)
    const before = await balanceOf(dev.db, org.orgId)
    const started = await api(org, "/billing/checkout", { method: "POST", body: { amount_usd: "20", save_card: true } })
    expect(started.status).toBe(201)
    expect(started.json).toMatchObject({
      provider: { name: "sandbox", sandbox: true },
      payment: { provider: "sandbox", status: "pending" },
      client_secret: null,
      checkout_url: expect.stringMatching(/^http:\/\/127\.0\.0\.1:\d+\/c\/pay\/cs_test_\w+$/)
    })
    const pageUrl: string = started.json.checkout_url
    const page = await fetch(pageUrl)
    expect(page.status).toBe(200)
    expect(page.headers.get("content-security-policy")).toContain("default-src 'none'")
    const html = await page.text()
    expect(html).toContain("Sandbox checkout: development only, no money moves.")
    expect(html).toContain("Pay 20.00 USD")
    expect(html).not.toContain("<script")

    const declined = await payOnPage(pageUrl, "4000 0000 0000 0002")
    expect(declined.status).toBe(200)
    expect(declined.location).toBeNull()
    expect(declined.text).toContain("Your card was declined.")
    // The emulator's payment_intent.payment_failed reaches the webhook route.
    await eventually(async () =>
      (await api(org, `/billing/payments/${started.json.payment.id}`)).json.payment.status === "failed"
    )
    expect((await api(org, `/billing/payments/${started.json.payment.id}`)).json.payment).toMatchObject({
      status: "failed",
      failure_message: "Your card was declined."
    })

    const paid = await payOnPage(pageUrl, "4242 4242 4242 4242")
    expect(paid.status).toBe(303)
    const sessionId = pageUrl.split("/").pop()
    expect(paid.location).toBe(
      `${dev.server.baseUrl}/dashboard/orgs/${org.orgId}/billing?payment=${started.json.payment.id}&session_id=${sessionId}`
    )
    const back = await api(org, `/billing/payments/${started.json.payment.id}/confirm`, { method: "POST" })
    expect(back.json.payment).toMatchObject({ status: "succeeded", card: { last4: "4242" }, failure_message: null })
    // Paying again (the back button) charges nothing more.
    expect((await payOnPage(pageUrl, "4242 4242 4242 4242")).status).toBe(303)
    expect(await balanceOf(dev.db, org.orgId)).toBe(before + 20_000n)
    const summary = await api(org, "/billing")
    expect(summary.json.card).toMatchObject({ last4: "4242" })
    await expectLedgerInvariant(dev.db)
  })

  it("gives the cap allowance back when the owner cancels, and the page no longer takes a card", async () => {
    const org = await seedOrg(dev.db)
    const started = await api(org, "/billing/checkout", { method: "POST", body: { amount_usd: "200" } })
    expect(started.status).toBe(201)
    const page = await fetch(started.json.checkout_url).then((r) => r.text())
    expect(page).toContain(`billing?payment=${started.json.payment.id}&amp;checkout=canceled`)
    expect((await api(org, "/billing/checkout", { method: "POST", body: { amount_usd: "5" } })).status).toBe(402)

    const canceled = await api(org, `/billing/payments/${started.json.payment.id}/cancel`, { method: "POST" })
    expect(canceled.status).toBe(200)
    expect(canceled.json.payment.status).toBe("canceled")
    const after = await payOnPage(started.json.checkout_url, "4242 4242 4242 4242")
    expect(after.status).toBe(410)
    expect(after.location).toBeNull()
    expect(after.text).toContain("This checkout has ended")
    expect((await api(org, `/billing/payments/${started.json.payment.id}`)).json.payment.status).toBe("canceled")
    expect((await api(org, "/billing/checkout", { method: "POST", body: { amount_usd: "200" } })).status).toBe(201)
  })

  it("answers 404 for a session it never made", async () => {
    const org = await seedOrg(dev.db)
    const started = await api(org, "/billing/checkout", { method: "POST", body: { amount_usd: "5" } })
    expect((await fetch(`${sandboxEmulatorOf(started.json.checkout_url)}/c/pay/cs_test_nope`)).status).toBe(404)
  })
})
