import type { Page } from "playwright-core"
import { describe, expect, it } from "vitest"
import { balanceOf, expectLedgerInvariant } from "../support/ledgerChecks.js"
import { billingBrowserWorlds } from "./browserWorlds.js"
import { newOrg, topUpEntries, webhookUrl } from "./support.js"

/**
 * Buy credits as an owner does it, in Chromium: the dashboard's form sends the browser to
 * the payment page (the Stripe emulator's hosted page, marked as a sandbox, in both worlds:
 * with keys standing in for Stripe, without them started by the service), the owner pays with a test card, comes back to the billing page, which says the
 * payment is paid and shows the balance up once.
 */
const { signedIn, worlds } = billingBrowserWorlds("billing_checkout_browser")

/** Fills Buy credits and continues to the payment page. */
const buy = async (page: Page, orgId: string, usd: string) => {
  await page.goto(`/dashboard/orgs/${orgId}/billing`)
  const form = page.getByRole("region", { name: "Buy credits" })
  await form.getByLabel(/Amount in US dollars/).fill(usd)
  await form.getByRole("button", { name: "Continue to payment" }).click()
}

const billingText = (page: Page) => page.locator("main").textContent()

describe("Buy credits in the browser", () => {
  it("with Stripe: to the hosted page, pay, back to billing, balance up once", async () => {
    const org = await newOrg(worlds.stripe)
    const before = await balanceOf(worlds.stripe.db, org.orgId)
    const { page, problems } = await signedIn(worlds.stripe, org)
    await buy(page, org.orgId, "25")
    await page.waitForURL((url) => url.href.startsWith(`${worlds.stripe.stripe.url}/c/pay/cs_test_`))
    await page.locator("input[name=card_number]").fill("4242 4242 4242 4242")
    await page.getByRole("button", { name: /Pay 25\.00 USD/ }).click()
    await page.waitForURL((url) =>
      url.href.startsWith(`${worlds.stripe.server.baseUrl}/dashboard/orgs/${org.orgId}/billing`)
    )
    await expect.poll(() => billingText(page), { timeout: 20_000 }).toContain("Paid: 25,000 cr")
    await expect.poll(() => billingText(page), { timeout: 20_000 }).toContain(
      `Your balance is now ${(Number(before) + 25_000).toLocaleString("en-US")} cr`
    )
    const text = (await billingText(page)) ?? ""
    for (const word of ["client_secret", "/v1/", "Stripe.js", "stripe."]) expect(text).not.toContain(word)

    // Stripe's events after the return change nothing.
    const paymentId = new URL(page.url()).searchParams.get("payment")
    const session = [...worlds.stripe.stripe.checkoutSessions.values()].find((s) =>
      s.metadata.payment_id === paymentId
    )!
    expect(session.status).toBe("complete")
    for (
      const event of [
        worlds.stripe.stripe.lastEvent("checkout.session.completed", session.id),
        worlds.stripe.stripe.lastEvent("payment_intent.succeeded", session.payment_intent!)
      ]
    ) {
      expect((await worlds.stripe.stripe.deliver(webhookUrl(worlds.stripe), event)).status).toBe(200)
    }
    await page.reload()
    await expect.poll(() => billingText(page), { timeout: 20_000 }).toContain("Paid: 25,000 cr")
    expect(await balanceOf(worlds.stripe.db, org.orgId)).toBe(before + 25_000n)
    expect(await topUpEntries(worlds.stripe.db, org.orgId)).toHaveLength(1)
    expect(problems).toEqual([])
    await expectLedgerInvariant(worlds.stripe.db)
  })

  it("with Stripe: a declined card, then leaving the page, shows the payment cancelled", async () => {
    const org = await newOrg(worlds.stripe)
    const { page, problems } = await signedIn(worlds.stripe, org)
    await buy(page, org.orgId, "10")
    await page.waitForURL((url) => url.href.startsWith(`${worlds.stripe.stripe.url}/c/pay/`))
    await page.locator("input[name=card_number]").fill("4000 0000 0000 0002")
    await page.getByRole("button", { name: /Pay/ }).click()
    await expect.poll(() => page.locator("body").textContent(), { timeout: 20_000 }).toContain(
      "Your card was declined."
    )
    await page.getByRole("link", { name: "Cancel and go back" }).click()
    await page.waitForURL((url) => url.href.includes("checkout=canceled"))
    await expect.poll(() => billingText(page), { timeout: 20_000 }).toContain("The payment was cancelled")
    expect(problems).toEqual([])
  })

  it("with Stripe: saves a card on the hosted page and says so back on billing", async () => {
    const org = await newOrg(worlds.stripe)
    const { page, problems } = await signedIn(worlds.stripe, org)
    await page.goto(`/dashboard/orgs/${org.orgId}/billing`)
    await page.getByRole("button", { name: "Add a card" }).click()
    await page.waitForURL((url) => url.href.startsWith(`${worlds.stripe.stripe.url}/c/pay/cs_test_`))
    await page.locator("input[name=card_number]").fill("4242 4242 4242 4242")
    await page.getByRole("button", { name: "Save the card" }).click()
    await page.waitForURL((url) => url.searchParams.has("card_setup"))
    await expect.poll(() => billingText(page), { timeout: 20_000 }).toContain("Card saved: visa ending in 4242.")
    await expect.poll(() => billingText(page), { timeout: 20_000 }).toContain("visa …4242")
    expect(await page.getByRole("button", { name: "Replace the card" }).isVisible()).toBe(true)
    expect(problems).toEqual([])
  })

  it("in the sandbox: the emulator's marked page, a declined card, then a paid one, back to billing", async () => {
    const org = await newOrg(worlds.sandbox)
    const before = await balanceOf(worlds.sandbox.db, org.orgId)
    const { page, problems } = await signedIn(worlds.sandbox, org)
    await buy(page, org.orgId, "20")
    await page.waitForURL((url) => url.pathname.startsWith("/c/pay/cs_test_"))
    await expect.poll(() => page.locator("body").textContent(), { timeout: 20_000 }).toContain(
      "Sandbox checkout: development only"
    )
    await page.getByLabel("Test card number").fill("4000 0000 0000 0002")
    await page.getByRole("button", { name: "Pay 20.00 USD" }).click()
    await expect.poll(() => page.getByRole("alert").textContent(), { timeout: 20_000 }).toContain(
      "Your card was declined."
    )
    await page.getByLabel("Test card number").fill("4242 4242 4242 4242")
    await page.getByRole("button", { name: "Pay 20.00 USD" }).click()
    await page.waitForURL((url) => url.pathname === `/dashboard/orgs/${org.orgId}/billing`)
    await expect.poll(() => billingText(page), { timeout: 20_000 }).toContain("Paid: 20,000 cr")
    expect(await balanceOf(worlds.sandbox.db, org.orgId)).toBe(before + 20_000n)
    expect(problems).toEqual([])
  })

  it("in the sandbox: a card that asks for 3-D Secure pays once its holder completes the bank's step", async () => {
    const org = await newOrg(worlds.sandbox)
    const before = await balanceOf(worlds.sandbox.db, org.orgId)
    const { page, problems } = await signedIn(worlds.sandbox, org)
    await buy(page, org.orgId, "15")
    await page.waitForURL((url) => url.pathname.startsWith("/c/pay/cs_test_"))
    await page.getByLabel("Test card number").fill("4000 0027 6000 3184")
    await page.getByRole("button", { name: "Pay 15.00 USD" }).click()
    await page.getByRole("button", { name: "Fail authentication" }).click()
    await expect.poll(() => page.getByRole("alert").textContent(), { timeout: 20_000 }).toContain(
      "We are unable to authenticate your payment method."
    )
    await page.getByLabel("Test card number").fill("4000 0027 6000 3184")
    await page.getByRole("button", { name: "Pay 15.00 USD" }).click()
    expect(await page.locator("h1").textContent()).toBe("3-D Secure authentication")
    await page.getByRole("button", { name: "Complete authentication" }).click()
    await page.waitForURL((url) => url.pathname === `/dashboard/orgs/${org.orgId}/billing`)
    await expect.poll(() => billingText(page), { timeout: 20_000 }).toContain("Paid: 15,000 cr")
    expect(await balanceOf(worlds.sandbox.db, org.orgId)).toBe(before + 15_000n)
    expect(problems).toEqual([])
  })
})
