import type { BrowserContext, Page } from "playwright-core"
import { beforeAll, describe, expect, it } from "vitest"
import { creditedTopUp } from "../../Billing/support.js"
import { emailFindInput } from "../../Purchasing/support.js"
import { addMember } from "../../support/fixtures.js"
import { freshPhone, makeAgent, owner, signIn } from "../../support/people.js"
import { call } from "../../support/world.js"
import { allAccessibilityFindings, DESKTOP, newContext, openPage, PHONE, screenshot } from "../browser.js"
import { browser, world } from "../world.js"

/**
 * The dashboard by keyboard and at ease, in Chromium: a skip link first on every page, the
 * focus on what was just made, a key's Copy button within reach, questions asked in the
 * page, delivery rows that say what is true, the API reference and the pages axe-core
 * finds nothing on (every impact), and Billing's tables within a phone's width.
 */
let context: BrowserContext
let page: Page
let problems: Array<string>
let person: Awaited<ReturnType<typeof owner>>

export const keyboardCases = () => {
  beforeAll(async () => {
    person = await owner(world, "Keys Org")
    context = await newContext(browser, world.server.baseUrl)
    await context.addCookies([{ name: "service_session", value: person.token, url: world.server.baseUrl }])
    ;({ page, problems } = await openPage(context))
  })

  const orgPage = (path = "") => page.goto(`/dashboard/orgs/${person.orgId}${path}`)
  const focused = (on: Page = page) =>
    on.evaluate(() => {
      const element = document.activeElement
      return element === null || element === document.body
        ? "body"
        : `${element.tagName.toLowerCase()}${element.id === "" ? "" : `#${element.id}`}: ${
          (element.textContent ?? "").trim().slice(0, 40)
        }`
    })
  const settled = async (on: Page = page) => {
    await on.locator("h1").first().waitFor()
    await expect.poll(() => on.locator(".spinner").count(), { timeout: 15_000 }).toBe(0)
  }

  describe("the dashboard by keyboard", () => {
    it("offers a skip link to the main content first on every page", async () => {
      const pages = [
        "/dashboard/account",
        ...["", "/agents", "/approvals", "/calls", "/receipts", "/jobs", "/webhooks", "/keys", "/members", "/billing"]
          .map((path) => `/dashboard/orgs/${person.orgId}${path}`),
        "/docs",
        "/docs/errors"
      ]
      const signedOut = await newContext(browser, world.server.baseUrl)
      const { page: stranger } = await openPage(signedOut)
      for (const [on, path] of [[stranger, "/dashboard/"] as const, ...pages.map((path) => [page, path] as const)]) {
        await on.goto(path)
        await settled(on)
        await on.keyboard.press("Tab")
        expect(await focused(on), path).toBe("a: Skip to main content")
        await on.keyboard.press("Enter")
        expect(await focused(on), path).toMatch(/^main#main: /)
        // The page stays where it was: the link moves the focus, it does not navigate.
        expect(new URL(on.url()).pathname).toBe(path)
      }
      await signedOut.close()
      expect(problems).toEqual([])
    })

    it("puts the focus on the new agent's key, whose Copy button copies it without tabbing", async () => {
      await orgPage("/agents")
      const form = page.getByRole("form", { name: "New agent" })
      await form.getByLabel("Name").fill("keyboard")
      await form.getByLabel("Name").press("Enter")
      const panel = page.getByRole("region", { name: "Key of keyboard" })
      await panel.waitFor()
      expect(await focused()).toBe("button: Copy")
      expect(await panel.locator(":focus").count()).toBe(1)
      await page.keyboard.press("Enter")
      const key = (await panel.getByTestId("secret-value").textContent())!
      expect(key).toMatch(/^sk_test_/)
      await expect.poll(() => page.evaluate(() => navigator.clipboard.readText()), { timeout: 10_000 }).toBe(key)
      expect(problems).toEqual([])
    })

    it("clears the phone refusal once the phone is verified", async () => {
      const newcomer = await signIn(world)
      const fresh = await newContext(browser, world.server.baseUrl)
      await fresh.addCookies([{ name: "service_session", value: newcomer.token, url: world.server.baseUrl }])
      const { page: account, problems: accountProblems } = await openPage(fresh)
      await account.goto("/dashboard/account")
      await account.getByLabel("New org name").fill("Later Org")
      await account.getByRole("button", { name: "Create org" }).click()
      await account.getByText("Verify your phone number first").waitFor()
      const phone = freshPhone()
      await account.getByLabel("Phone (international, +1…)").fill(phone)
      await account.getByRole("button", { name: "Text me a code" }).click()
      await account.getByLabel("Code").waitFor()
      await account.getByLabel("Code").fill(world.twilio.lastCode(phone))
      await account.getByRole("button", { name: "Verify" }).click()
      await account.getByText(`Phone ${phone} is verified.`).waitFor()
      expect(await account.getByText("Verify your phone number first").count()).toBe(0)
      await account.getByRole("button", { name: "Create org" }).click()
      await account.waitForURL(/\/dashboard\/orgs\//)
      expect(accountProblems.filter((p) => !p.includes("403"))).toEqual([])
      await fresh.close()
    })

    it("says why Resend waits, and what a resent delivery has and has not done yet", async () => {
      const made = await call(world, "POST", `/v1/orgs/${person.orgId}/webhooks`, {
        token: person.token,
        body: { url: world.receiver.url }
      })
      expect(made.status).toBe(201)
      const sent = await call(world, "POST", `/v1/orgs/${person.orgId}/webhooks/${made.json.webhook.id}/test`, {
        token: person.token
      })
      expect(sent.json.status).toBe("delivered")
      await orgPage("/webhooks")
      const row = page.getByTestId(`delivery-${sent.json.id}`)
      await expect.poll(() => row.textContent(), { timeout: 15_000 }).toContain("delivered")

      // The receiver now answers slowly: the resent delivery waits for its first try meanwhile.
      world.receiver.setMode({ kind: "slow", delayMs: 8_000 })
      await row.getByRole("button", { name: "Resend" }).click()
      await expect.poll(() => row.textContent(), { timeout: 5_000 }).toContain("none since it was sent again")
      const text = (await row.textContent())!
      expect(text).toContain("200 (before it was sent again)")
      expect(text).not.toMatch(/pending\s*0\s*200/)
      const resend = row.getByRole("button", { name: "Resend" })
      expect(await resend.isDisabled()).toBe(true)
      const why = await resend.evaluate((button) =>
        document.getElementById(button.getAttribute("aria-describedby") ?? "")?.textContent
      )
      expect(why).toContain("A try is due: it can be sent again once it is settled.")
      await expect.poll(() => row.textContent(), { timeout: 30_000 }).toContain("delivered")
      world.receiver.setMode({ kind: "ok" })
      expect(await row.textContent()).not.toContain("before it was sent again")
      expect(problems).toEqual([])
    })
  })

  describe("pages axe-core finds nothing on, of any impact", () => {
    it("the API reference at /docs, at desktop and phone width, light and dark", async () => {
      for (
        const options of [
          { viewport: DESKTOP },
          { viewport: PHONE },
          { viewport: DESKTOP, colorScheme: "dark" as const }
        ]
      ) {
        const docsContext = await browser.newContext({ baseURL: world.server.baseUrl, ...options })
        const { page: docs, problems: docsProblems } = await openPage(docsContext)
        const answer = await docs.goto("/docs")
        expect(answer!.headers()["content-security-policy"]).toContain("default-src 'none'")
        await docs.getByRole("heading", { name: "Agents", level: 2 }).waitFor()
        expect(await docs.getByRole("heading", { name: /POST \/v1\/orgs\/\{orgId\}\/agents$/ }).count()).toBe(1)
        expect(await allAccessibilityFindings(docs), JSON.stringify(options)).toEqual([])
        if (options.viewport === DESKTOP && !("colorScheme" in options)) await screenshot(docs, "api-reference-desktop")
        expect(await docs.evaluate(() => document.documentElement.scrollWidth)).toBeLessThanOrEqual(
          options.viewport.width
        )
        expect(docsProblems).toEqual([])
        await docsContext.close()
      }
    }, 120_000)

    it("Jobs with a job, the error codes, Members with its actions column, Billing with a payment", async () => {
      const tester = await makeAgent(world, person.token, person.orgId, { name: "jobber", mode: "test" })
      const accepted = await call(world, "POST", "/v1/execute", {
        token: tester.key,
        body: { tool: "hunter-email-finder", inputs: Array.from({ length: 30 }, (_, i) => emailFindInput(200 + i)) }
      })
      expect(accepted.status).toBe(202)
      await orgPage("/jobs")
      await page.getByTestId(`job-${accepted.json.job_id}`).waitFor({ timeout: 20_000 })
      expect(await allAccessibilityFindings(page)).toEqual([])

      await page.goto("/docs/errors#not_found")
      await settled()
      expect(await allAccessibilityFindings(page)).toEqual([])

      await orgPage("/members")
      await settled()
      await page.getByRole("cell", { name: person.email }).waitFor()
      expect(await allAccessibilityFindings(page)).toEqual([])

      const billed = await creditedTopUp(world, 25_000)
      await addMember(world.db, billed.org.orgId, person.userId, "owner")
      await page.goto(`/dashboard/orgs/${billed.org.orgId}/billing`)
      await settled()
      await page.getByRole("region", { name: "Payments" }).waitFor()
      expect(await allAccessibilityFindings(page)).toEqual([])
      expect(problems).toEqual([])
    })

    it("Billing's tables fit a phone's width without scrolling sideways", async () => {
      const phone = await newContext(browser, world.server.baseUrl, PHONE)
      await phone.addCookies([{ name: "service_session", value: person.token, url: world.server.baseUrl }])
      const { page: small, problems: smallProblems } = await openPage(phone)
      const orgs = (await call(world, "GET", "/v1/me", { token: person.token })).json.orgs as Array<{ id: string }>
      for (const org of orgs) {
        await small.goto(`/dashboard/orgs/${org.id}/billing`)
        await settled(small)
        await small.getByRole("region", { name: "Plans compared" }).waitFor()
        const widths = await small.locator(".table-scroll").evaluateAll((frames) =>
          frames.map((frame) => ({ scroll: frame.scrollWidth, client: frame.clientWidth }))
        )
        expect(widths.length).toBeGreaterThan(0)
        for (const { client, scroll } of widths) expect(scroll).toBeLessThanOrEqual(client)
        expect(await small.evaluate(() => document.documentElement.scrollWidth)).toBeLessThanOrEqual(PHONE.width)
        // Each cell still says its column.
        expect(
          await small.getByRole("region", { name: "Plans compared" }).locator("td[data-label='Monthly fee']").count()
        )
          .toBeGreaterThan(0)
      }
      expect(smallProblems).toEqual([])
      await phone.close()
    })
  })
}
