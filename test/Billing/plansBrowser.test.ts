import type { Page } from "playwright-core"
import { describe, expect, it } from "vitest"
import { type SeededOrg } from "../support/fixtures.js"
import { call, type World } from "../support/world.js"
import { billingBrowserWorlds } from "./browserWorlds.js"
import { newOrg } from "./support.js"

/**
 * Choosing a plan as an owner does it, in Chromium: the plans side by side, the founding
 * seats left, a confirmation naming the amount before anything is charged, the payment page
 * (the Stripe emulator's hosted Checkout, marked as a sandbox, with keys and without), back
 * to billing on the new plan, with one founding seat fewer left; a downgrade says what it
 * changes before it happens.
 */
const { signedIn, worlds } = billingBrowserWorlds("billing_plans_browser")

const billingText = async (page: Page) => (await page.locator("main").textContent()) ?? ""

const seatsLeft = async (world: World) =>
  (await call(world, "GET", "/v1/pricing")).json.founding_offer.remaining as number

/** On billing: picks the founding offer, reads the confirmation, and continues to the payment page. */
const chooseFounding = async (page: Page, orgId: string, left: number) => {
  await page.goto(`/dashboard/orgs/${orgId}/billing`)
  const plans = page.getByRole("region", { name: "Plans", exact: true })
  await expect.poll(() => plans.textContent(), { timeout: 20_000 }).toContain(`${left} of 100 founding seats left.`)
  for (const column of ["Monthly fee", "Tool recommendations a day", "Active agents", "Seats", "Price of calls"]) {
    expect(await plans.getByRole("columnheader", { name: column }).count()).toBe(1)
  }
  expect(await plans.textContent()).toContain("$499.00")
  await plans.getByRole("button", { name: "Choose Founding Pro at $49.00 a month" }).click()
  const confirmation = page.getByRole("group", { name: "Confirm the plan change" })
  expect(await confirmation.textContent()).toContain("Subscribe to Founding Pro for $49.00 a month, charged today")
  await confirmation.getByRole("button", { name: "Continue to payment: $49.00 a month" }).click()
}

const backOnPro = async (page: Page, world: World, org: SeededOrg, left: number) => {
  await page.waitForURL((url) => url.pathname === `/dashboard/orgs/${org.orgId}/billing`)
  await expect.poll(() => billingText(page), { timeout: 20_000 }).toContain(
    "Subscribed: the Pro plan is on, $49.00 paid"
  )
  expect(await seatsLeft(world)).toBe(left - 1)
  await page.reload()
  await expect.poll(() => billingText(page), { timeout: 20_000 }).toContain(`${left - 1} of 100 founding seats left.`)
  const text = await billingText(page)
  for (const word of ["client_secret", "/v1/", "Stripe.js", "stripe."]) expect(text).not.toContain(word)
  // A downgrade says what it changes before anything happens.
  await page.getByRole("button", { name: "Choose Pay as you go" }).click()
  const confirmation = page.getByRole("group", { name: "Confirm the plan change" })
  expect(await confirmation.textContent()).toContain("Limits drop at once to 5 active agents, 3 seats")
  await confirmation.getByRole("button", { name: "Keep my plan" }).click()
  expect((await call(world, "GET", `/v1/orgs/${org.orgId}/billing`, { token: org.owner.sessionToken })).json.plan.id)
    .toBe("pro")
}

describe("choosing a plan in the browser", () => {
  it("with Stripe: Founding Pro through the hosted Checkout page, a seat fewer left", async () => {
    const org = await newOrg(worlds.stripe)
    const left = await seatsLeft(worlds.stripe)
    const { page, problems } = await signedIn(worlds.stripe, org)
    await chooseFounding(page, org.orgId, left)
    await page.waitForURL((url) => url.href.startsWith(`${worlds.stripe.stripe.url}/c/pay/cs_test_`))
    await page.locator("input[name=card_number]").fill("4242 4242 4242 4242")
    await page.getByRole("button", { name: "Subscribe: 49.00 USD a month" }).click()
    await backOnPro(page, worlds.stripe, org, left)
    expect(problems).toEqual([])
  })

  it("in the sandbox: the same journey on the emulator's marked page", async () => {
    const org = await newOrg(worlds.sandbox)
    const left = await seatsLeft(worlds.sandbox)
    const { page, problems } = await signedIn(worlds.sandbox, org)
    await chooseFounding(page, org.orgId, left)
    await page.waitForURL((url) => url.pathname.startsWith("/c/pay/cs_test_"))
    expect(await page.locator("body").textContent()).toContain("Sandbox checkout: development only")
    await page.getByLabel("Test card number").fill("4242 4242 4242 4242")
    await page.getByRole("button", { name: "Subscribe: 49.00 USD a month" }).click()
    await backOnPro(page, worlds.sandbox, org, left)

    // Manage billing: the emulator's portal replaces the card and shows the new one on file.
    await page.getByRole("button", { name: /^Manage billing/ }).click()
    await page.waitForURL((url) => url.pathname.startsWith("/p/session/bps_"))
    expect(await page.locator("body").textContent()).toContain("Card on file: visa ending 4242")
    await page.getByLabel("Test card number").fill("5555 5555 5555 4444")
    await page.getByRole("button", { name: "Replace the card" }).click()
    await expect.poll(() => page.getByRole("status").textContent(), { timeout: 20_000 }).toContain(
      "The card ending 4444 is now the card on file."
    )
    const portal = (await page.locator("body").textContent()) ?? ""
    expect(portal).toContain("Card on file: mastercard ending 4444")
    expect(portal).not.toContain("ending 4242")
    await page.getByRole("link", { name: "Return" }).click()
    await page.waitForURL((url) => url.pathname === `/dashboard/orgs/${org.orgId}/billing`)
    await expect.poll(() => billingText(page), { timeout: 20_000 }).toContain("…4444")
    expect(problems).toEqual([])
  })
})
