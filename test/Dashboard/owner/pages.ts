import type { BrowserContext, Page } from "playwright-core"
import { beforeAll, describe, expect, it } from "vitest"
import { emailFindInput } from "../../Purchasing/support.js"
import { freshEmail, makeAgent, owner } from "../../support/people.js"
import { linkIn } from "../../support/smtp.js"
import { call } from "../../support/world.js"
import { newContext, openPage } from "../browser.js"
import { browser, world } from "../world.js"

/**
 * The dashboard's other pages, each against what the API says: refusals shown in the
 * service's words with their documentation link, disputes from a receipt, the catalogue at
 * the org's prices, call filters, settings. The owner is signed in through the real flows
 * and the browser given the session cookie.
 */
let context: BrowserContext
let page: Page
let problems: Array<string>
let person: Awaited<ReturnType<typeof owner>>
let agent: Awaited<ReturnType<typeof makeAgent>>

export const pagesCases = () => {
  beforeAll(async () => {
    person = await owner(world, "Pages Org")
    agent = await makeAgent(world, person.token, person.orgId, { name: "tester", mode: "test" })
    context = await newContext(browser, world.server.baseUrl)
    await context.addCookies([{ name: "service_session", value: person.token, url: world.server.baseUrl }])
    ;({ page, problems } = await openPage(context))
  })

  const orgPage = (path: string) => page.goto(`/dashboard/orgs/${person.orgId}${path}`)
  const refused = (status: string) =>
    `console: Failed to load resource: the server responded with a status of ${status}`

  describe("dashboard pages", () => {
    it("invites a member; the last owner's step-down is refused in the service's words, linked to its doc", async () => {
      await orgPage("/members")
      const invitee = freshEmail("invitee")
      const form = page.getByRole("form", { name: "Invite" })
      await form.getByLabel("Email").fill(invitee)
      await form.getByRole("button", { name: "Invite" }).click()
      await expect.poll(() => page.locator("main").textContent()).toContain(invitee)
      await world.smtp.waitFor(invitee, (m) => m.text.includes("/dashboard/invites/accept?token="))

      await page.getByLabel(`Role of ${person.email}`).selectOption("member")
      const alert = page.getByRole("alert")
      await expect.poll(() => alert.textContent()).toContain("An org must keep at least one owner")
      expect(await alert.getByRole("link").getAttribute("href")).toBe(`${world.server.baseUrl}/docs/errors#last_owner`)
      expect(problems.splice(0)).toEqual([refused("409 (Conflict)")])
    })

    it("an invitation link opened signed out leads through sign-in back to the invitation, which joins", async () => {
      const invitee = freshEmail("joiner")
      const invited = await call(world, "POST", `/v1/orgs/${person.orgId}/invites`, {
        token: person.token,
        body: { email: invitee }
      })
      expect(invited.status).toBe(201)
      const inviteMail = await world.smtp.waitFor(invitee, (m) => m.text.includes("/invites/accept?token="))
      const stranger = await newContext(browser, world.server.baseUrl)
      const { page: fresh, problems: freshProblems } = await openPage(stranger)
      await fresh.goto(linkIn(inviteMail, "/invites/accept?token="))
      await fresh.getByText("You were invited to an org").waitFor()
      const before = world.smtp.messages.length
      await fresh.getByLabel("Email").fill(invitee)
      await fresh.getByRole("button", { name: "Email me a sign-in link" }).click()
      const signInMail = await world.smtp.waitFor(
        invitee,
        (m) => world.smtp.messages.indexOf(m) >= before && m.text.includes("/auth/email/verify")
      )
      await fresh.goto(linkIn(signInMail, "/auth/email/verify"))
      await fresh.getByText("You joined Pages Org").waitFor()
      const members = await call(world, "GET", `/v1/orgs/${person.orgId}/members`, { token: person.token })
      expect(members.json.members.map((m: any) => m.email)).toContain(invitee.toLowerCase())
      expect(freshProblems).toEqual([])
      await stranger.close()
    })

    it("disputes a charged item from its receipt and shows the dispute's status", async () => {
      const bought = await call(world, "POST", "/v1/execute", {
        token: agent.key,
        body: { tool: "hunter-email-finder", inputs: [emailFindInput(1), emailFindInput(2, "mock-fail")] }
      })
      expect(bought.status).toBe(200)
      await orgPage(`/receipts/${bought.json.receipt_id}`)
      const receipt = page.getByRole("region", { name: "Receipt" })
      const [charged, failed] = [receipt.locator("tbody tr").nth(0), receipt.locator("tbody tr").nth(1)]
      await charged.waitFor()
      expect(await failed.getByRole("button", { name: "Dispute" }).count()).toBe(0)
      await charged.getByRole("button", { name: "Dispute" }).click()
      await charged.getByLabel("What is wrong?").fill("wrong person")
      await charged.getByRole("button", { name: "Open dispute" }).click()
      await expect.poll(() => charged.textContent()).toContain("open")

      const listed = await call(world, "GET", `/v1/orgs/${person.orgId}/disputes`, { token: person.token })
      expect(listed.json.disputes).toMatchObject([{
        receipt_id: bought.json.receipt_id,
        item_index: 0,
        status: "open"
      }])
      await page.reload()
      await expect.poll(() => page.getByRole("region", { name: "Receipt" }).locator("tbody tr").nth(0).textContent())
        .toContain("open")
      expect(problems).toEqual([])
    })

    it("searches the catalogue at the org's plan prices", async () => {
      await orgPage("/catalogue")
      await page.getByLabel("Search endpoints").fill("hunter email finder")
      const row = page.locator("tbody tr", { hasText: "hunter/email-finder" })
      await row.waitFor()
      const priced = await call(world, "GET", "/v1/endpoints?q=hunter/email-finder&plan=payg")
      const price = Number(priced.json.endpoints[0].price_per_call).toLocaleString("en-US")
      expect(await row.textContent()).toContain(`${price} cr`)
      expect(await page.locator("main").textContent()).toContain("prices for the payg plan")
      expect(problems).toEqual([])
    })

    it("filters the calls list by status", async () => {
      const priced = await call(world, "POST", "/v1/call", {
        token: agent.key,
        body: { endpoint: "abstractapi/vat-categories", query: {} }
      })
      expect(priced.json.status).toBe("test")
      await orgPage("/calls")
      await page.locator("tbody tr", { hasText: "abstractapi/vat-categories" }).waitFor()
      await page.getByLabel("Status").selectOption("failed")
      await page.getByText("No calls match.").waitFor()
      await page.getByLabel("Status").selectOption("test")
      const row = page.locator("tbody tr", { hasText: "abstractapi/vat-categories" })
      await row.waitFor()
      expect(await row.textContent()).toContain("tester")
      expect(problems).toEqual([])
    })

    it("saves the low-balance alert", async () => {
      await orgPage("/settings")
      const field = page.getByLabel("Alert when the balance falls under (USD)")
      await expect.poll(() => field.inputValue()).toBe("5.000")
      await field.fill("12.5")
      await page.getByRole("button", { name: "Save" }).click()
      await page.getByText("Saved.").waitFor()
      const settings = await call(world, "GET", `/v1/orgs/${person.orgId}/notifications`, { token: person.token })
      expect(settings.json.notifications.low_balance_usd).toBe("12.500")
      expect(problems).toEqual([])
    })
  })
}
