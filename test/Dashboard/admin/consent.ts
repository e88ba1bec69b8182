import { UnauthorizedError } from "@modelcontextprotocol/sdk/client/auth.js"
import { Client } from "@modelcontextprotocol/sdk/client/index.js"
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js"
import { createServer, type Server } from "node:http"
import type { AddressInfo } from "node:net"
import type { Page } from "playwright-core"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { agentDefaults } from "../../../src/Services/Agents/Agents.js"
import { consentSignInLink, MemoryOAuthProvider } from "../../Mcp/oauthSupport.js"
import { makeAgent, owner } from "../../support/people.js"
import { call } from "../../support/world.js"
import { allAccessibilityFindings, newContext, openPage, PHONE, screenshot } from "../browser.js"
import { browser, world } from "../world.js"

/**
 * The MCP sign-in and consent pages as an owner meets them in Chromium: in the dashboard's
 * look, axe-clean, the mailed link opened in the same tab carrying the flow on to the
 * consent step, and the new agent's form starting at the API's defaults written as money is
 * written on the dashboard.
 */
let callback: Server
const received: Array<URL> = []

export const consentCases = () => {
  beforeAll(async () => {
    callback = createServer((req, res) => {
      received.push(new URL(req.url ?? "/", "http://127.0.0.1"))
      res.end("You can close this window.")
    })
    await new Promise<void>((resolve) => callback.listen(0, "127.0.0.1", resolve))
  })

  afterAll(async () => {
    await new Promise((resolve) => callback?.close(resolve))
  })

  /** An MCP client (the official SDK) refused at /mcp: the authorization URL it would open. */
  const authorizationUrl = async () => {
    const provider = new MemoryOAuthProvider(`http://127.0.0.1:${(callback.address() as AddressInfo).port}/callback`)
    const client = new Client({ name: "consent-test", version: "1.0.0" })
    await expect(
      client.connect(
        new StreamableHTTPClientTransport(new URL(`${world.server.baseUrl}/mcp`), { authProvider: provider })
      )
    ).rejects.toBeInstanceOf(UnauthorizedError)
    return provider.authorizationUrl!.href
  }

  /** The stylesheet the dashboard's own page shell links. */
  const dashboardStylesheet = async () => {
    const shell = await (await fetch(`${world.server.baseUrl}/dashboard/`)).text()
    return new URL(/<link rel="stylesheet"[^>]*href="([^"]+)"/.exec(shell)![1]!, `${world.server.baseUrl}/dashboard/`)
      .pathname
  }

  /** The page is dressed as the dashboard: its stylesheet, its top bar, a skip link to the main content. */
  const expectDashboardLook = async (page: Page) => {
    const stylesheets = await page.locator("link[rel=stylesheet]").evaluateAll((links) =>
      links.map((link) => new URL((link as HTMLLinkElement).href).pathname)
    )
    expect(stylesheets).toEqual([await dashboardStylesheet()])
    const topbar = page.locator("header.topbar")
    expect(await topbar.evaluate((bar) => getComputedStyle(bar).backgroundColor)).toBe("rgb(20, 33, 61)")
    expect(await topbar.getByRole("link", { name: "Agent Gateway" }).getAttribute("href")).toBe("/dashboard/")
    const skip = page.getByRole("link", { name: "Skip to main content" })
    expect(await skip.getAttribute("href")).toBe("#main")
    expect(await page.locator("main#main").count()).toBe(1)
    expect(await allAccessibilityFindings(page)).toEqual([])
  }

  describe("the MCP sign-in and consent pages", () => {
    it("look like the dashboard, go on to consent from the mailed link in the same tab, and start at the API's defaults", async () => {
      const person = await owner(world, "Consent Org")
      // An agent made with the API's defaults, listed on the consent page in money.
      await makeAgent(world, person.token, person.orgId, { name: "existing", mode: "test" })
      const context = await newContext(browser, world.server.baseUrl)
      const { page, problems } = await openPage(context)
      await page.goto(await authorizationUrl())
      await page.getByRole("heading", { name: "Sign in to connect" }).waitFor()
      const interaction = page.url()
      await expectDashboardLook(page)
      await screenshot(page, "mcp-sign-in-desktop")

      const before = world.smtp.messages.length
      await page.getByLabel("Email address").fill(person.email)
      await page.getByRole("button", { name: "Mail me a sign-in link" }).click()
      await page.getByRole("heading", { name: "Check your mail" }).waitFor()
      await expectDashboardLook(page)

      // The link, followed in this very tab, signs in and comes back to the pending request.
      await page.goto(await consentSignInLink(world, person.email, before))
      await page.getByRole("heading", { name: "Connect an agent" }).waitFor()
      expect(page.url()).toBe(interaction)
      await expectDashboardLook(page)
      await screenshot(page, "mcp-consent-desktop")

      const budget = page.getByLabel("Monthly budget (credits)")
      const threshold = page.getByLabel(/Ask for approval above/)
      expect(await budget.inputValue()).toBe(agentDefaults.monthlyBudgetCredits.toString())
      expect(await threshold.inputValue()).toBe(agentDefaults.approvalThresholdCredits.toString())
      const main = (await page.locator("main").textContent())!
      expect(main).toContain("The default: 50,000 cr ($50.00) of purchases a calendar month")
      expect(main).toContain("above 20,000 cr ($20.00) waits for an owner's approval")
      expect(main).toContain("existing (test; budget 50,000 cr ($50.00) a month; approval above 20,000 cr ($20.00))")
      // Money as the dashboard writes it: never bare credits beside dollars with a zero third decimal.
      expect(main).not.toMatch(/\d credits \(\$/)
      expect(main).not.toMatch(/\$[\d,]+\.\d{2}0(?!\d)/)

      await page.getByLabel("A new agent in Consent Org").check()
      await page.getByLabel("Name").fill("consented")
      await page.getByRole("button", { name: "Allow" }).click()
      await page.waitForURL(/127\.0\.0\.1:\d+\/callback/)
      const answer = received.filter((url) => url.pathname === "/callback").at(-1)!
      expect(answer.searchParams.get("error")).toBeNull()
      expect(answer.searchParams.get("code")).toBeTruthy()
      const agents = await call(world, "GET", `/v1/orgs/${person.orgId}/agents`, { token: person.token })
      expect(agents.json.agents.find((agent: any) => agent.name === "consented")).toMatchObject({
        monthly_budget: { credits: "50000" },
        approval_threshold: { credits: "20000" }
      })
      expect(problems).toEqual([])
      await context.close()
    })

    it("keeps a link opened in another browser unspent, for the browser that asked; fits a phone", async () => {
      const person = await owner(world, "Phone Org")
      const context = await newContext(browser, world.server.baseUrl, PHONE)
      const { page, problems } = await openPage(context)
      await page.goto(await authorizationUrl())
      await page.getByRole("heading", { name: "Sign in to connect" }).waitFor()
      const interaction = page.url()
      const before = world.smtp.messages.length
      await page.getByLabel("Email address").fill(person.email)
      await page.getByRole("button", { name: "Mail me a sign-in link" }).click()
      await page.getByRole("heading", { name: "Check your mail" }).waitFor()
      const link = await consentSignInLink(world, person.email, before)

      const elsewhere = await newContext(browser, world.server.baseUrl)
      const { page: other } = await openPage(elsewhere)
      const answer = await other.goto(link)
      expect(answer!.status()).toBe(400)
      await other.getByRole("heading", { name: "Open the link where you started" }).waitFor()
      expect(await allAccessibilityFindings(other)).toEqual([])
      await elsewhere.close()

      await page.goto(link)
      await page.getByRole("heading", { name: "Connect an agent" }).waitFor()
      expect(page.url()).toBe(interaction)
      expect(await page.evaluate(() => document.documentElement.scrollWidth)).toBeLessThanOrEqual(PHONE.width)
      expect(await allAccessibilityFindings(page)).toEqual([])
      await screenshot(page, "mcp-consent-phone")
      // The page's 400 from the other browser is that browser's; this one saw none.
      expect(problems).toEqual([])
      await context.close()
    })
  })
}
