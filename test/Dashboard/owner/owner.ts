import { readFileSync } from "node:fs"
import type { BrowserContext, Page } from "playwright-core"
import { beforeAll, describe, expect, it } from "vitest"
import { emailFindInput } from "../../Purchasing/support.js"
import { makeAgent, owner } from "../../support/people.js"
import { call } from "../../support/world.js"
import { accessibilityProblems, DESKTOP, newContext, openPage, PHONE, screenshot } from "../browser.js"
import { browser, world } from "../world.js"

/**
 * What a new owner must not be misled by, in real Chromium against the service as it ships
 * (live purchases closed, a trial org): the agent form's defaults, the live-purchase notice,
 * refusals on the agent's card, test activity labelled as test and kept apart from spend,
 * the agent named on approvals, lists that refresh by themselves, one money and date style.
 */
let context: BrowserContext
let page: Page
let problems: Array<string>
let person: Awaited<ReturnType<typeof owner>>
/** The test agent the journeys after the receipts one buy and call with (the plan allows 5 agents). */
const state = { testerKey: "" }

export const ownerCases = () => {
  beforeAll(async () => {
    person = await owner(world, "Owner Org")
    context = await newContext(browser, world.server.baseUrl)
    await context.addCookies([{ name: "service_session", value: person.token, url: world.server.baseUrl }])
    ;({ page, problems } = await openPage(context))
  })

  const orgPage = (path = "") => page.goto(`/dashboard/orgs/${person.orgId}${path}`)
  const agentsOf = async () =>
    (await call(world, "GET", `/v1/orgs/${person.orgId}/agents`, { token: person.token })).json.agents as Array<any>

  describe("the dashboard an owner trusts with money", () => {
    it("shows a new org's first steps on its overview", async () => {
      await orgPage()
      const steps = page.getByRole("region", { name: "Getting started" })
      await steps.waitFor()
      const state = await steps.locator("li").evaluateAll((all) =>
        all.map((li) =>
          `${li.textContent!.replace(/[✓○]/, "").replace(/ \((done|to do)\)/, "").trim()}: ${
            li.getAttribute("data-done")
          }`
        )
      )
      expect(state).toEqual([
        "Verify your phone: true",
        "Create an agent: false",
        "Copy its key into your agent: false",
        "Make a first call: false",
        "Add credits: false"
      ])
      await screenshot(page, "onboarding-desktop")
      await steps.getByRole("link", { name: "Create an agent" }).click()
      await page.getByRole("heading", { name: "Agents" }).waitFor()
      expect(problems).toEqual([])
    })

    it("starts the agent form from the API's defaults, says them in money, and sends an empty field as the default", async () => {
      await orgPage("/agents")
      const form = page.getByRole("form", { name: "New agent" })
      const budget = form.getByLabel("Monthly budget (credits)")
      const threshold = form.getByLabel("Approval threshold (credits)")
      expect(await budget.inputValue()).toBe("50000")
      expect(await threshold.inputValue()).toBe("20000")
      const text = await form.textContent()
      expect(text).toContain("At most $50.00 of purchases a calendar month")
      expect(text).toContain("A purchase above $20.00 waits for an owner's approval")
      // The money follows what is typed.
      await budget.fill("1500")
      expect(await form.textContent()).toContain("At most $1.50 of purchases")
      await screenshot(page, "agent-form-desktop")

      // Emptied fields are the defaults, not 0 and not "never ask".
      await form.getByLabel("Name").fill("defaults")
      await budget.fill("")
      await threshold.fill("")
      await form.getByRole("button", { name: "Create agent" }).click()
      await page.getByRole("region", { name: "Key of defaults" }).waitFor()
      const made = (await agentsOf()).find((a) => a.name === "defaults")
      expect(made.monthly_budget.credits).toBe("50000")
      expect(made.approval_threshold.credits).toBe("20000")
      const row = page.getByTestId("agent-defaults")
      await expect.poll(() => row.textContent()).toContain("approval above 20,000 cr ($20.00)")

      // Editing: an emptied budget stays the default; never asking is a choice of its own.
      await row.getByRole("button", { name: "Edit" }).click()
      await row.getByLabel("Monthly budget (credits)").fill("")
      await row.getByLabel("Never ask for approval").check()
      await row.getByRole("button", { name: "Save" }).click()
      await expect.poll(() => row.textContent()).toContain("never asks for approval")
      const edited = (await agentsOf()).find((a) => a.name === "defaults")
      expect(edited.monthly_budget.credits).toBe("50000")
      expect(edited.approval_threshold).toBeNull()
      expect(problems).toEqual([])
    })

    it("says live purchases are closed where live mode is offered and where credits are sold", async () => {
      await orgPage("/agents")
      const form = page.getByRole("form", { name: "New agent" })
      expect(await form.getByTestId("live-closed").count()).toBe(0)
      await form.getByLabel("Mode").selectOption("live")
      expect(await form.getByTestId("live-closed").textContent()).toContain("Live purchases are closed for now")
      expect(await form.getByLabel("Mode").textContent()).toContain("(purchases closed for now)")

      await orgPage("/billing")
      const notice = page.getByTestId("live-closed")
      await notice.waitFor()
      expect(await notice.textContent()).toContain("Live purchases are closed for now")
      // The trial's limits are shown where the balance is.
      expect(await page.getByTestId("trial-terms").textContent()).toContain("at most 50 cr of spend an hour")
      // The India-issued cards' rules are there for who needs them, folded away; no API path shows.
      expect(await page.getByText(/RBI/).isVisible()).toBe(false)
      expect(await page.locator("main").innerText()).not.toMatch(/(GET|POST|PUT|DELETE) \/v1/)
      await screenshot(page, "billing-desktop")
      expect(problems).toEqual([])
    })

    it("shows a refusal on the agent's card with its reason and what to do, without a reload", async () => {
      const live = await makeAgent(world, person.token, person.orgId, { name: "liveone", mode: "live" })
      await orgPage("/agents")
      const row = page.getByTestId("agent-liveone")
      await row.waitFor()
      expect(await row.getByRole("region", { name: "Refusals of liveone" }).count()).toBe(0)
      const refused = await call(world, "POST", "/v1/execute", {
        token: live.key,
        body: { tool: "hunter-email-finder", inputs: [emailFindInput(1)] }
      })
      expect(refused.json.error.code).toBe("live_execute_unavailable")
      const refusals = row.getByRole("region", { name: "Refusals of liveone" })
      await refusals.waitFor({ timeout: 20_000 })
      const text = await refusals.textContent()
      expect(text).toContain("Live purchases are closed for now.")
      expect(text).toContain("Once, ")
      expect(text).toContain("Rehearse purchases with a test agent")
      expect(text).not.toContain("live_execute_unavailable")
      await screenshot(page, "agents-refusal-desktop")
      expect(problems).toEqual([])
    })

    it("labels a test purchase as test everywhere and keeps it apart from spend", async () => {
      const tester = await makeAgent(world, person.token, person.orgId, { name: "rehearsal", mode: "test" })
      state.testerKey = tester.key
      const bought = await call(world, "POST", "/v1/execute", {
        token: tester.key,
        body: { tool: "hunter-email-finder", inputs: [emailFindInput(1), emailFindInput(2)] }
      })
      expect(bought.status).toBe(200)
      await orgPage(`/receipts/${bought.json.receipt_id}`)
      const receipt = page.getByRole("region", { name: "Receipt" })
      await receipt.waitFor()
      expect(await receipt.textContent()).toContain("test: no credits moved")
      const money = await receipt.getByTestId("receipt-money").textContent()
      expect(money).toContain("A test purchase")
      expect(money).toContain("No credits moved")
      expect(money).not.toMatch(/charged/i)
      // Each item with the input the agent sent and the (mock) result it got, labelled as test.
      const items = receipt.getByRole("region", { name: "Inputs and results" })
      expect(await items.getByTestId("receipt-items-test").textContent()).toContain("not real data")
      const first = items.getByTestId("receipt-item-0")
      await first.waitFor()
      const firstText = (await first.textContent())!
      expect(firstText).toContain("first name")
      expect(firstText).toContain("Jane1")
      expect(firstText).toContain("acme1.example.com")
      expect(firstText).toContain("Result (test)")
      expect(await first.locator("dd").allTextContents()).toContain(
        (await call(world, "GET", `/v1/orgs/${person.orgId}/receipts/${bought.json.receipt_id}/items`, {
          token: person.token
        })).json.items[0].result.email
      )
      expect(await items.getByTestId("receipt-item-1").textContent()).toContain("Jane2")
      const listed = page.locator("tbody tr[data-mode=test]").first()
      await listed.waitFor()
      // The agent has a column of its own, by name.
      const columns = await listed.locator("xpath=ancestor::table/thead//th").allTextContents()
      expect(await listed.locator("td").nth(columns.indexOf("Agent")).textContent()).toBe("rehearsal")
      expect(await listed.textContent()).toContain("test: no credits moved")

      await orgPage()
      const tile = page.getByTestId("test-activity")
      await expect.poll(() => tile.textContent()).toContain("1 purchase")
      expect(await tile.textContent()).toContain("no credits moved")
      expect(await page.getByTestId("total-spend").textContent()).toContain("0 cr ($0.00)")
      expect(await page.locator("main").textContent()).toContain("No live purchases yet")
      await screenshot(page, "overview-test-activity-desktop")

      // A long result (a page's text) is folded away; its JSON opens on demand.
      const extracted = await call(world, "POST", "/v1/execute", {
        token: tester.key,
        body: { tool: "jina-reader", inputs: [{ url: "https://news.example.com/story" }] }
      })
      expect(extracted.status).toBe(200)
      await orgPage(`/receipts/${extracted.json.receipt_id}`)
      const item = page.getByRole("region", { name: "Inputs and results" }).getByTestId("receipt-item-0")
      await item.waitFor()
      expect(await item.textContent()).toContain("https://news.example.com/story")
      const folded = item.locator("details.item-json")
      expect(await folded.locator("summary").textContent()).toMatch(/^Result \(\d+ fields\): show JSON$/)
      expect(await folded.locator("pre").isVisible()).toBe(false)
      await folded.locator("summary").click()
      const shown = JSON.parse((await folded.locator("pre").textContent())!)
      expect(shown).toEqual(extracted.json.items[0].result)
      expect(await accessibilityProblems(page)).toEqual([])
      expect(problems).toEqual([])
    })

    it("names the agent and its mode on approvals, and shows an opened approval once", async () => {
      const careful = await makeAgent(world, person.token, person.orgId, {
        name: "careful",
        mode: "test",
        approval_threshold_credits: 1
      })
      await orgPage("/approvals")
      await page.getByRole("heading", { name: "Waiting" }).waitFor()
      const asked = await call(world, "POST", "/v1/execute", {
        token: careful.key,
        body: { tool: "hunter-email-finder", inputs: [emailFindInput(3)] }
      })
      expect(asked.status).toBe(202)
      const id: string = asked.json.approval.id
      // It appears without a reload, naming who asked.
      const card = page.getByTestId(`approval-${id}`)
      await card.waitFor({ timeout: 20_000 })
      expect(await card.locator(".asked-by").textContent()).toBe("Asked by careful test")
      expect(await page.locator("tbody tr", { hasText: "careful" }).count()).toBe(1)

      await orgPage(`/approvals/${id}`)
      await page.getByTestId(`approval-${id}`).first().waitFor()
      await expect.poll(() => page.locator(".spinner").count()).toBe(0)
      expect(await page.getByTestId(`approval-${id}`).count()).toBe(1)

      const mail = await world.smtp.waitFor(
        person.email,
        (m) => m.text.includes(id.slice(0, 8)) || m.text.includes("approve?token=")
      )
      const link = /Approve: (\S+)/.exec(mail.text)![1]!
      const stranger = await newContext(browser, world.server.baseUrl)
      const { page: linkPage, problems: linkProblems } = await openPage(stranger)
      await linkPage.goto(link)
      await linkPage.getByRole("heading", { name: "Approve this purchase?" }).waitFor()
      expect(await linkPage.getByTestId("approval-agent").textContent()).toContain("careful")
      expect(await linkPage.getByTestId("approval-agent").textContent()).toContain("test: no credits move")
      await screenshot(linkPage, "approval-link-desktop")
      expect(linkProblems).toEqual([])
      await stranger.close()
      expect(problems).toEqual([])
    })

    it("shows a new job without a reload", async () => {
      await orgPage("/jobs")
      await page.getByRole("heading", { name: "Jobs" }).waitFor()
      await expect.poll(() => page.locator(".spinner").count()).toBe(0)
      const accepted = await call(world, "POST", "/v1/execute", {
        token: state.testerKey,
        body: { tool: "hunter-email-finder", inputs: Array.from({ length: 30 }, (_, i) => emailFindInput(100 + i)) }
      })
      expect(accepted.status).toBe(202)
      const job = page.getByTestId(`job-${accepted.json.job_id}`)
      await job.waitFor({ timeout: 20_000 })
      expect(await job.textContent()).toContain("by rehearsal")
      expect(await job.textContent()).toContain("test: no credits moved")
      expect(problems).toEqual([])
    })

    it("filters calls by part of the endpoint and by dates", async () => {
      const made = await call(world, "POST", "/v1/call", {
        token: state.testerKey,
        body: { endpoint: "abstractapi/vat-categories", query: {} }
      })
      expect(made.json.status).toBe("test")
      await orgPage("/calls")
      const row = page.locator("tbody tr", { hasText: "abstractapi/vat-categories" })
      await row.waitFor()
      expect(await row.textContent()).toContain("test: no credits moved")
      await page.getByLabel("Endpoint").fill("VAT-CAT")
      await expect.poll(() => page.locator("tbody tr").count()).toBe(1)
      await page.getByLabel("Endpoint").fill("no-such-thing")
      await page.getByText("No calls match.").waitFor()
      await page.getByLabel("Endpoint").fill("")
      const tomorrow = new Date(Date.now() + 86_400_000)
      const day = (d: Date) =>
        `${d.getFullYear()}-${String(d.getMonth() + 1).padStart(2, "0")}-${String(d.getDate()).padStart(2, "0")}`
      await page.getByLabel("From").fill(day(tomorrow))
      await page.getByText("No calls match.").waitFor()
      await page.getByLabel("From").fill(day(new Date()))
      await row.waitFor()
      expect(problems).toEqual([])
    })

    it("downloads the receipts as CSV and as JSON Lines from the Receipts page", async () => {
      await orgPage("/receipts")
      const panel = page.locator("details.export")
      await panel.locator("summary").click()
      const form = page.getByRole("form", { name: "Download receipts" })
      const [csv] = await Promise.all([
        page.waitForEvent("download"),
        form.getByRole("link", { name: "Download" }).click()
      ])
      expect(csv.suggestedFilename()).toMatch(/^receipts-\d{4}-\d{2}-01-to-\d{4}-\d{2}-\d{2}\.csv$/)
      const lines = readFileSync((await csv.path())!, "utf8").split("\r\n")
      expect(lines[0]!.startsWith("receipt_id,created_at,agent_id,agent_name,mode,tool")).toBe(true)
      expect(lines.some((line) => line.includes(",rehearsal,test,hunter-email-finder,"))).toBe(true)

      await form.getByLabel("Format").selectOption("jsonl")
      const [jsonl] = await Promise.all([
        page.waitForEvent("download"),
        form.getByRole("link", { name: "Download" }).click()
      ])
      const rows = readFileSync((await jsonl.path())!, "utf8").trim().split("\n").map((line) => JSON.parse(line))
      const receipts = await call(world, "GET", `/v1/orgs/${person.orgId}/receipts?limit=200`, { token: person.token })
      const items = receipts.json.receipts.reduce((sum: number, r: any) => sum + r.item_count, 0)
      expect(rows).toHaveLength(items)
      expect(rows.every((row) => typeof row.input === "object")).toBe(true)
      expect(problems).toEqual([])
    })

    it("writes money with two decimals and dates in one style with UTC on hover", async () => {
      await orgPage("/agents")
      await page.getByTestId("agent-defaults").waitFor()
      const text = (await page.locator("main").textContent())!
      expect(text).toContain("$50.00")
      // No dollar amount with a third decimal that is a zero ("$5.000").
      expect(text).not.toMatch(/\$[\d,]+\.\d{2}0(?!\d)/)
      const times = page.locator("main time")
      expect(await times.count()).toBeGreaterThan(0)
      for (const title of await times.evaluateAll((all) => all.map((t) => t.getAttribute("title")))) {
        expect(title).toMatch(/^\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2} UTC$/)
      }
      expect(problems).toEqual([])
    })

    it("serves its icon and the API reference's fonts itself", async () => {
      const icon = await fetch(`${world.server.baseUrl}/favicon.ico`)
      expect(icon.status).toBe(200)
      expect(icon.headers.get("content-type")).toBe("image/svg+xml")
      const docs = await context.newPage()
      const elsewhere: Array<string> = []
      docs.on("request", (request) => {
        if (!request.url().startsWith(world.server.baseUrl) && !request.url().startsWith("data:")) {
          elsewhere.push(request.url())
        }
      })
      await docs.goto("/docs")
      await docs.waitForLoadState("networkidle")
      expect(elsewhere).toEqual([])
      await docs.close()
    })

    it("follows the system's dark mode, and fits a phone", async () => {
      const dark = await browser.newContext({ baseURL: world.server.baseUrl, viewport: PHONE, colorScheme: "dark" })
      await dark.addCookies([{ name: "service_session", value: person.token, url: world.server.baseUrl }])
      const { page: night, problems: nightProblems } = await openPage(dark)
      await night.goto(`/dashboard/orgs/${person.orgId}`)
      await night.getByTestId("balance").waitFor()
      const background = await night.evaluate(() => getComputedStyle(document.documentElement).backgroundColor)
      expect(background).toBe("rgb(15, 20, 32)")
      await screenshot(night, "overview-dark-phone")
      await night.goto(`/dashboard/orgs/${person.orgId}/agents`)
      await night.getByTestId("agent-liveone").waitFor()
      await screenshot(night, "agents-dark-phone")
      expect(await night.evaluate(() => document.documentElement.scrollWidth)).toBeLessThanOrEqual(PHONE.width)
      expect(nightProblems).toEqual([])
      await dark.close()
    })
  })

  describe("accessibility", () => {
    const orgPages = [
      "",
      "/agents",
      "/approvals",
      "/calls",
      "/receipts",
      "/jobs",
      "/webhooks",
      "/keys",
      "/members",
      "/billing",
      "/catalogue",
      "/tools",
      "/settings"
    ]

    it(
      "has no serious or critical axe-core violation on any page, at desktop and phone width, light and dark",
      async () => {
        const found: Array<string> = []
        for (
          const [label, options] of [
            ["desktop", { viewport: DESKTOP }],
            ["phone", { viewport: PHONE }],
            ["desktop dark", { viewport: DESKTOP, colorScheme: "dark" as const }]
          ] as const
        ) {
          const context = await browser.newContext({
            baseURL: world.server.baseUrl,
            reducedMotion: "reduce",
            ...options
          })
          const { page: signedOut } = await openPage(context)
          await signedOut.goto("/dashboard/")
          await signedOut.getByRole("heading", { name: "Sign in" }).waitFor()
          for (const problem of await accessibilityProblems(signedOut)) found.push(`${label} sign-in: ${problem}`)
          const suffix = label.replace(" ", "-")
          await screenshot(signedOut, `page-sign-in-${suffix}`)
          await context.addCookies([{ name: "service_session", value: person.token, url: world.server.baseUrl }])
          const { page: each } = await openPage(context)
          for (const path of ["/dashboard/account", ...orgPages.map((p) => `/dashboard/orgs/${person.orgId}${p}`)]) {
            await each.goto(path)
            await each.locator("h1").first().waitFor()
            await expect.poll(() => each.locator(".spinner").count()).toBe(0)
            for (const problem of await accessibilityProblems(each)) found.push(`${label} ${path}: ${problem}`)
            const name = path.split("/").length > 4
              ? path.split("/").at(-1)
              : path.endsWith("account")
              ? "account"
              : "overview"
            await screenshot(each, `page-${name}-${suffix}`)
          }
          await context.close()
        }
        expect(found).toEqual([])
      },
      180_000
    )
  })
}
