import type { Browser, BrowserContext, Page } from "playwright-core"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import type { OrgId } from "../../src/Domain/Ids.js"
import { startFakeToolProvider } from "../support/fakeToolProvider.js"
import { freshEmail, freshPhone } from "../support/people.js"
import { linkIn } from "../support/smtp.js"
import { call, startWorld, topUp, type World } from "../support/world.js"
import { ensureDashboardBuilt, launchBrowser, newContext, openPage, PHONE, screenshot } from "./browser.js"

/**
 * An owner runs an org from the dashboard in real Chromium, against the service on real
 * PostgreSQL with real SMTP and SMS fakes: each journey clicks through the pages and checks
 * what they show, and no page logs an error. The journeys share one signed-in browser and
 * build on each other, as a person's first hour would.
 */
let world: World
let provider: Awaited<ReturnType<typeof startFakeToolProvider>>
let browser: Browser
let context: BrowserContext
let page: Page
let problems: Array<string>

const owner = { email: freshEmail("dash-owner"), phone: freshPhone() }
const state = { orgId: "", agentKey: "", agentId: "", approvalId: "" }

beforeAll(async () => {
  await ensureDashboardBuilt()
  provider = await startFakeToolProvider()
  world = await startWorld("dashboard", {
    smtp: true,
    twilio: true,
    receiver: true,
    // Live purchases from the fake tool provider (Firecrawl, 5 credits a page).
    env: { LIVE_EXECUTE_ENABLED: "true", PROVIDERS_UPSTREAM: provider.url, PROVIDER_FIRECRAWL_API_KEY: "fc-secret" }
  })
  browser = await launchBrowser()
  context = await newContext(browser, world.server.baseUrl)
  ;({ page, problems } = await openPage(context))
})

afterAll(async () => {
  await browser?.close()
  await world?.close()
  await provider?.close()
})

const orgPage = (path = "") => page.goto(`/dashboard/orgs/${state.orgId}${path}`)
const execute = (body: unknown) => call(world, "POST", "/v1/execute", { token: state.agentKey, body })

describe("the dashboard", () => {
  it("serves the app under DASHBOARD_PATH with cached assets and a strict Content-Security-Policy", async () => {
    const shell = await fetch(`${world.server.baseUrl}/dashboard/agents`)
    expect(shell.status).toBe(200)
    expect(shell.headers.get("cache-control")).toBe("no-cache")
    const csp = shell.headers.get("content-security-policy")!
    expect(csp).toContain("default-src 'self'")
    expect(csp).toContain("script-src 'self'")
    expect(csp).not.toContain("unsafe-inline")
    const html = await shell.text()
    expect(html).toContain(`<base href="/dashboard/">`)
    const asset = /src="\.\/(assets\/[^"]+\.js)"/.exec(html)![1]!
    const script = await fetch(`${world.server.baseUrl}/dashboard/${asset}`)
    expect(script.status).toBe(200)
    expect(script.headers.get("content-type")).toContain("javascript")
    expect(script.headers.get("cache-control")).toBe("public, max-age=31536000, immutable")
    expect((await fetch(`${world.server.baseUrl}/dashboard/assets/missing.js`)).status).toBe(404)
  })

  it("signs in by the mailed link, verifies a phone and creates an org", async () => {
    await page.goto("/dashboard/")
    await expect.poll(() => page.getByRole("heading", { name: "Sign in" }).isVisible()).toBe(true)
    await screenshot(page, "sign-in-desktop")
    await page.getByLabel("Email").fill(owner.email)
    await page.getByRole("button", { name: "Email me a sign-in link" }).click()
    await page.getByRole("heading", { name: "Check your mail" }).waitFor()

    const mail = await world.smtp.waitFor(owner.email, (m) => m.text.includes("/auth/email/verify"))
    await page.goto(linkIn(mail, "/auth/email/verify"))
    // A new person has no org: the account page asks for a phone, then a name.
    await page.getByRole("heading", { name: "Your account" }).waitFor()
    await page.getByLabel("Phone (international, +1…)").fill(owner.phone)
    await page.getByRole("button", { name: "Text me a code" }).click()
    await page.getByLabel("Code").waitFor()
    await page.getByLabel("Code").fill(world.twilio.lastCode(owner.phone))
    await page.getByRole("button", { name: "Verify" }).click()
    await page.getByText(`Phone ${owner.phone} is verified.`).waitFor()

    await page.getByLabel("New org name").fill("Dashboard Labs")
    await page.getByRole("button", { name: "Create org" }).click()
    await page.getByRole("heading", { name: "Dashboard Labs" }).waitFor()
    state.orgId = /\/orgs\/([0-9a-f-]+)/.exec(page.url())![1]!
    await expect.poll(() => page.getByTestId("balance").textContent()).toContain("cr")
    expect(problems).toEqual([])
  })

  it("creates an agent, copies its key once, and the key works against /v1/agent", async () => {
    await orgPage("/agents")
    const form = page.getByRole("form", { name: "New agent" })
    await form.getByLabel("Name").fill("researcher")
    await form.getByLabel("Mode").selectOption("live")
    // An invalid allowlist entry is named inline and nothing is made.
    await form.getByLabel(/IP allowlist/).fill("10.0.0.0/8, not-an-address")
    await form.getByRole("button", { name: "Create agent" }).click()
    await expect.poll(() => form.locator(".field-error").textContent()).toContain("not-an-address")
    expect(await form.getByRole("alert").getByRole("link").count()).toBe(0)
    // The browser logs the refused request; it is the one made on purpose, and the only one.
    expect(problems.splice(0)).toEqual([
      "console: Failed to load resource: the server responded with a status of 400 (Bad Request)"
    ])
    await form.getByLabel(/IP allowlist/).fill("")
    await form.getByLabel(/Approval threshold/).fill("5")
    await form.getByRole("button", { name: "Create agent" }).click()

    const secret = page.getByRole("region", { name: "Key of researcher" })
    await secret.waitFor()
    await secret.getByRole("button", { name: "Copy" }).click()
    await secret.getByRole("button", { name: "Copied" }).waitFor()
    const copied = await page.evaluate(() => navigator.clipboard.readText())
    expect(copied).toMatch(/^sk_live_/)
    expect(await secret.getByTestId("secret-value").textContent()).toBe(copied)
    state.agentKey = copied
    await screenshot(page, "agents-desktop")

    const self = await call(world, "GET", "/v1/agent", { token: copied })
    expect(self.status).toBe(200)
    expect(self.json.agent.name).toBe("researcher")
    expect(self.json.agent.mode).toBe("live")
    state.agentId = self.json.agent.id

    const row = page.getByTestId("agent-researcher")
    await expect.poll(() => row.textContent()).toContain(copied.slice(0, 12))
    expect(await row.textContent()).toContain("approval above 5 cr")
    // The key is shown once: hiding it leaves only the prefix anywhere on the page.
    await secret.getByRole("button", { name: "Hide now" }).click()
    await secret.waitFor({ state: "detached" })
    expect(await page.content()).not.toContain(copied)
    expect(problems).toEqual([])
  })

  it("approves a purchase through the mailed link, which lands on the dashboard's page for it", async () => {
    await topUp(world, state.orgId as OrgId, 100_000n)
    const inputs = [{ url: "https://news.example.com/a" }, { url: "https://news.example.com/b" }]
    const asked = await execute({ tool: "firecrawl-scrape", inputs })
    expect(asked.status).toBe(202)
    expect(asked.json.error.code).toBe("approval_required")
    state.approvalId = asked.json.approval.id

    // The approvals page lists it first, with its countdown.
    await orgPage("/approvals")
    const card = page.getByTestId(`approval-${state.approvalId}`).first()
    await card.waitFor()
    expect(await card.textContent()).toContain("Expires in")
    expect(await card.textContent()).toContain("above the agent's approval threshold")
    expect(await card.locator(".asked-by").textContent()).toBe("Asked by researcher live")
    await screenshot(page, "approvals-desktop")

    const mail = await world.smtp.waitFor(owner.email, (m) => m.text.includes("/dashboard/approve?token="))
    const approveLink = /Approve: (\S+)/.exec(mail.text)![1]!
    expect(new URL(approveLink).pathname).toBe("/dashboard/approve")
    await page.goto(approveLink)
    await page.getByRole("heading", { name: "Approve this purchase?" }).waitFor()
    expect(await page.locator("dl").textContent()).toContain("Firecrawl")
    expect(await page.getByTestId("approval-agent").textContent()).toContain("researcher")
    expect(await page.getByTestId("approval-agent").textContent()).toContain("spends the org's credits")
    await page.getByRole("button", { name: "Approve" }).click()
    await page.getByRole("heading", { name: "This purchase is approved" }).waitFor()

    const bought = await execute({ tool: "firecrawl-scrape", inputs, approval_id: state.approvalId })
    expect(bought.status).toBe(200)
    expect(bought.json.status).toBe("done")
    expect(problems).toEqual([])
  })

  it("edits the agent to never ask, then watches a 30-item job finish with a live progress bar", async () => {
    await orgPage("/agents")
    const row = page.getByTestId("agent-researcher")
    await row.getByRole("button", { name: "Edit" }).click()
    await row.getByLabel("Never ask for approval").check()
    await row.getByRole("button", { name: "Save" }).click()
    await expect.poll(() => row.textContent()).toContain("never asks for approval")

    const accepted = await execute({
      tool: "firecrawl-scrape",
      inputs: Array.from({ length: 30 }, (_, i) => ({ url: `https://news.example.com/job/${i}` }))
    })
    expect(accepted.status).toBe(202)
    const jobId: string = accepted.json.job_id

    await orgPage("/jobs")
    const job = page.getByTestId(`job-${jobId}`)
    const bar = job.getByRole("progressbar")
    await bar.waitFor()
    expect(await bar.getAttribute("aria-valuemax")).toBe("30")
    await expect.poll(() => bar.getAttribute("aria-valuenow"), { timeout: 30_000 }).toBe("30")
    await expect.poll(() => job.textContent()).toContain("done")
    expect(await job.textContent()).toContain("30 passed")
    await screenshot(page, "jobs-desktop")

    // Its receipt opens with every item's outcome and check.
    await job.getByRole("link").click()
    const receipt = page.getByRole("region", { name: "Receipt" })
    await receipt.waitFor()
    await expect.poll(() => receipt.locator("tbody tr").count()).toBe(30)
    expect(await receipt.textContent()).toContain("passed")
    expect(problems).toEqual([])
  })

  it("adds a webhook endpoint (secret shown once), sends a test and sees it delivered", async () => {
    await orgPage("/webhooks")
    const form = page.getByRole("form", { name: "New webhook endpoint" })
    await form.getByLabel("URL").fill(world.receiver.url)
    await form.getByLabel("A purchase finished").check()
    await form.getByRole("button", { name: "Add endpoint" }).click()
    const secret = page.getByRole("region", { name: `Signing secret of ${world.receiver.url}` })
    await secret.waitFor()
    expect(await secret.getByTestId("secret-value").textContent()).toMatch(/^whsec_/)

    const row = page.getByTestId(`webhook-${world.receiver.url}`)
    await row.getByRole("button", { name: "Send a test" }).click()
    const result = row.getByRole("status")
    await expect.poll(() => result.textContent()).toContain("delivered")
    expect(await result.textContent()).toContain("HTTP 200")
    expect(world.receiver.received.some((r) => r.body.includes("webhook.test"))).toBe(true)
    // The event log keeps what happened, with or without endpoints.
    await expect.poll(() => page.locator(".events").textContent()).toContain("A purchase was approved or rejected")
    await screenshot(page, "webhooks-desktop")
    expect(problems).toEqual([])
  })

  it("creates and revokes an org key; the revoked key stops working", async () => {
    await orgPage("/keys")
    const form = page.getByRole("form", { name: "New org key" })
    await form.getByLabel("Name").fill("reporting")
    await form.getByRole("button", { name: "Create key" }).click()
    const secret = page.getByRole("region", { name: "Secret of reporting" })
    const orgKey = (await secret.getByTestId("secret-value").textContent())!
    expect(orgKey).toMatch(/^ok_/)
    expect((await call(world, "GET", `/v1/orgs/${state.orgId}/usage`, { token: orgKey })).status).toBe(200)

    const row = page.getByTestId("org-key-reporting")
    await row.getByRole("button", { name: "Revoke" }).click()
    await row.waitFor({ state: "detached" })
    const refused = await call(world, "GET", `/v1/orgs/${state.orgId}/usage`, { token: orgKey })
    expect(refused.status).toBe(401)
    expect(problems).toEqual([])
  })

  it("shows the purchases in the spend charts, the balance, the receipts and the calls", async () => {
    const usage = await call(world, "GET", `/v1/orgs/${state.orgId}/usage`, { token: await sessionToken() })
    const spent = Number(usage.json.total_spend.credits)
    expect(spent).toBe(5 * 32)

    await orgPage()
    await expect.poll(() => page.getByTestId("total-spend").textContent()).toContain(`${spent} cr`)
    // The balance is the trial's credits and the top-up, less what was spent.
    const balance = Number(usage.json.balance.credits)
    expect(balance).toBe(Number(usage.json.trial?.credits.credits ?? 0) + 100_000 - spent)
    expect(await page.getByTestId("balance").textContent()).toContain(`${balance.toLocaleString("en-US")} cr`)
    const today = new Date().toISOString().slice(0, 10)
    const bar = page.locator(`rect.bar[data-value="${spent}"]`)
    expect(await bar.count()).toBe(1)
    const todayAsShown = await page.evaluate(
      (day) =>
        new Intl.DateTimeFormat(undefined, { dateStyle: "medium", timeZone: "UTC" }).format(
          new Date(`${day}T00:00:00Z`)
        ),
      today
    )
    expect(await bar.locator("title").textContent()).toContain(todayAsShown)
    const perAgent = page.getByRole("list", { name: "Credits spent per agent" })
    expect(await perAgent.textContent()).toContain("researcher")
    expect(await perAgent.textContent()).toContain(`${spent} cr`)
    await screenshot(page, "overview-desktop")

    await orgPage("/receipts")
    await expect.poll(() => page.locator("tbody tr").count()).toBe(2)
    expect(problems).toEqual([])
  })

  it("works at phone width: the menu opens the pages", async () => {
    const phone = await newContext(browser, world.server.baseUrl, PHONE)
    await phone.addCookies(await context.cookies())
    const { page: small, problems: smallProblems } = await openPage(phone)
    await small.goto(`/dashboard/orgs/${state.orgId}`)
    await small.getByRole("heading", { name: "Dashboard Labs" }).waitFor()
    await screenshot(small, "overview-phone")
    const nav = small.getByRole("navigation", { name: "Org pages" })
    expect(await nav.getByRole("link", { name: "Agents" }).isVisible()).toBe(false)
    await nav.getByRole("button", { name: "Menu" }).click()
    await nav.getByRole("link", { name: "Agents" }).click()
    await small.getByRole("heading", { name: "Agents" }).waitFor()
    await small.getByTestId("agent-researcher").waitFor()
    await screenshot(small, "agents-phone")
    // Every page fits the phone's width (wide tables scroll inside their own box).
    const pages = [
      "",
      "/agents",
      "/approvals",
      "/calls",
      "/receipts",
      "/jobs",
      "/webhooks",
      "/keys",
      "/members",
      "/billing"
    ]
    for (const path of [...pages, "/catalogue", "/tools", "/settings"]) {
      await small.goto(`/dashboard/orgs/${state.orgId}${path}`)
      await small.locator("h1").waitFor()
      await expect.poll(() => small.locator(".spinner").count()).toBe(0)
      if (["/jobs", "/approvals", "/webhooks"].includes(path)) await screenshot(small, `${path.slice(1)}-phone`)
      expect(await small.evaluate(() => document.documentElement.scrollWidth), path).toBeLessThanOrEqual(PHONE.width)
    }
    expect(smallProblems).toEqual([])
    await phone.close()
  })

  it("keeps no secret in the browser's storage", async () => {
    const stored = await page.evaluate(() => JSON.stringify({ ...localStorage, ...sessionStorage }))
    expect(stored).toBe("{}")
    const cookie = (await context.cookies()).find((c) => c.name === "service_session")!
    expect(cookie.httpOnly).toBe(true)
  })
})

/** The owner's session token, for reading through the API what the page should show. */
const sessionToken = async () => (await context.cookies()).find((c) => c.name === "service_session")!.value
