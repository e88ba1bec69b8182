import { randomUUID } from "node:crypto"
import type { Page } from "playwright-core"
import { describe, expect, it } from "vitest"
import { emailFindInput } from "../../Purchasing/support.js"
import { seedAgent, type SeededOrg, seedOrg } from "../../support/fixtures.js"
import { call } from "../../support/world.js"
import { newContext, openPage } from "../browser.js"
import { browser, world } from "../world.js"

/**
 * What an owner reads about their agents and plan, in Chromium: a test agent's budget bar
 * and what is left of it, every refusal of an agent on its card and under Calls filtered to
 * refused, the founding offer not offered again once used, and the dashboard's own words
 * where the API's codes and identifiers were.
 */

export const ownerViewsCases = () => {
  /** The dashboard of a fresh org, signed in as its owner. */
  const signedIn = async (org: SeededOrg) => {
    const context = await newContext(browser, world.server.baseUrl)
    await context.addCookies([{ name: "service_session", value: org.owner.sessionToken, url: world.server.baseUrl }])
    const opened = await openPage(context)
    const go = (path: string) => opened.page.goto(`/dashboard/orgs/${org.orgId}${path}`)
    return { ...opened, go }
  }

  const textOf = async (page: Page) => (await page.locator("main").textContent()) ?? ""

  describe("an owner's view of agents, plans and words", () => {
    it("shows a test agent's real month on its budget bar, and warns when its next purchase may not fit", async () => {
      const org = await seedOrg(world.db)
      const agent = await seedAgent(world.db, org.orgId, { mode: "test", name: "rehearsal" })
      let price = 0
      for (let i = 0; i < 4; i++) {
        const answer = await call(world, "POST", "/v1/call", { token: agent.key, body: { endpoint: "fakeprov/ok" } })
        expect(answer.json.status).toBe("test")
        price = Number(answer.json.charged.credits)
      }
      expect(price).toBeGreaterThan(0)
      // The budget leaves room for one more call: 80% of it is used.
      await world.db.query(`UPDATE agents SET monthly_budget_credits = $2 WHERE id = $1`, [agent.agentId, 5 * price])
      const balance = await call(world, "GET", "/v1/balance", { token: agent.key })
      expect(balance.json.month_to_date_spend.credits).toBe(String(4 * price))

      const { go, page, problems } = await signedIn(org)
      await go("/agents")
      const card = page.getByTestId("agent-rehearsal")
      const bar = card.getByRole("list", { name: "rehearsal: spend this month against its budget" })
      await expect.poll(() => bar.textContent(), { timeout: 20_000 }).toContain(
        `${(4 * price).toLocaleString("en-US")} of ${(5 * price).toLocaleString("en-US")} cr`
      )
      expect(await card.getByTestId("budget-warning").textContent()).toContain(
        `Only ${price.toLocaleString("en-US")} cr`
      )

      // Spent to the end: the card says every purchase now waits and every call is refused.
      await call(world, "POST", "/v1/call", { token: agent.key, body: { endpoint: "fakeprov/ok" } })
      await expect.poll(() => card.getByTestId("budget-warning").textContent(), { timeout: 20_000 }).toContain(
        "The monthly budget is used up"
      )
      expect(problems).toEqual([])
    })

    it("shows a refusal by the allowlist or an old key on the agent's card and under Calls filtered to refused", async () => {
      const org = await seedOrg(world.db)
      const fenced = await seedAgent(world.db, org.orgId, { name: "fenced", ipAllowlist: ["203.0.113.5"] })
      const rotated = await seedAgent(world.db, org.orgId, { name: "rotated" })
      expect((await call(world, "GET", "/v1/agent", { token: fenced.key })).json.error.code).toBe("ip_not_allowed")
      await call(world, "POST", `/v1/orgs/${org.orgId}/agents/${rotated.agentId}/rotate-key`, {
        token: org.owner.sessionToken
      })
      expect((await call(world, "POST", "/v1/call", { token: rotated.key, body: { endpoint: "fakeprov/ok" } })).status)
        .toBe(401)

      const { go, page, problems } = await signedIn(org)
      await go("/agents")
      const refusals = page.getByRole("region", { name: "Refusals of fenced" })
      await expect.poll(() => refusals.textContent(), { timeout: 20_000 }).toContain(
        "The request came from an address that is not on the agent's IP allowlist."
      )
      expect(await refusals.textContent()).toContain("Refused this month")
      await expect.poll(() => page.getByRole("region", { name: "Refusals of rotated" }).textContent()).toContain(
        "its key was rotated or revoked"
      )

      await go("/calls")
      await page.getByLabel("Status").selectOption("refused")
      const byLimits = page.getByRole("region", { name: "Refused by a limit" })
      await expect.poll(() => byLimits.locator("tr[data-code=ip_not_allowed]").textContent(), { timeout: 20_000 })
        .toContain("fenced")
      expect(await byLimits.locator("tr[data-code=unauthenticated]").textContent()).toContain("rotated")
      // Filtered to one agent, the other's refusal is gone.
      await page.getByLabel("Agent").selectOption({ label: "fenced" })
      await expect.poll(() => byLimits.locator("tbody tr").count()).toBe(1)
      expect(problems).toEqual([])
    })

    it("does not offer Founding Pro again to an org that has used it", async () => {
      const used = await seedOrg(world.db)
      await world.db.query(
        `INSERT INTO founding_offer_claims (org_id, payment_id, status, created_at, taken_at)
         VALUES ($1, $2, 'taken', now() - interval '40 days', now() - interval '40 days')`,
        [used.orgId, randomUUID()]
      )
      // A paid top-up in its history: the amount once, written as the page writes money.
      await world.db.query(
        `INSERT INTO payments (id, org_id, purpose, provider, provider_payment_id, provider_idempotency_key, status,
                               currency, amount_minor, usd_cents, credits, credited_at, created_at, updated_at)
         VALUES ($1, $2, 'top_up', 'sandbox', $3, $3, 'succeeded', 'usd', 2500, 2500, 25000, now(), now(), now())`,
        [randomUUID(), used.orgId, `sandbox_${randomUUID()}`]
      )
      const summary = await call(world, "GET", `/v1/orgs/${used.orgId}/billing`, { token: used.owner.sessionToken })
      expect(summary.json.plan).toMatchObject({ id: "payg", founding_offer: null, founding_offer_claim: "used" })

      const { go, page, problems } = await signedIn(used)
      await go("/billing")
      const plans = page.getByRole("region", { name: "Plans", exact: true })
      await expect.poll(() => plans.textContent(), { timeout: 20_000 }).toContain(
        "This org has already used it (it is once per org)."
      )
      expect(await plans.getByRole("button", { name: /Choose Founding Pro/ }).count()).toBe(0)
      // Pro itself is still offered, at its own price.
      expect(await plans.getByRole("button", { name: "Choose Pro" }).count()).toBe(1)
      expect(await plans.getByRole("columnheader", { name: "Tool recommendations a day" }).count()).toBe(1)
      expect(await plans.textContent()).not.toContain("Score lookups")
      const payment = page.locator("table tr", { hasText: "Credits" }).filter({ hasText: "25,000 cr" })
      await expect.poll(() => payment.count(), { timeout: 20_000 }).toBe(1)
      const paid = (await payment.textContent()) ?? ""
      expect(paid).toContain("$25.00")
      expect(paid).not.toContain("USD")
      expect(paid.split("$25.00")).toHaveLength(2)

      // An org that never took it is offered it.
      const fresh = await seedOrg(world.db)
      const other = await signedIn(fresh)
      await other.go("/billing")
      await expect.poll(() => other.page.getByRole("button", { name: /Choose Founding Pro/ }).count(), {
        timeout: 20_000
      }).toBe(1)
      expect([...problems, ...other.problems]).toEqual([])
    })

    it("speaks an owner's words: key notes, items, checks and event types", async () => {
      const org = await seedOrg(world.db)
      const buyer = await seedAgent(world.db, org.orgId, { name: "buyer", approvalThresholdCredits: null })
      const bought = await call(world, "POST", "/v1/execute", {
        token: buyer.key,
        body: { tool: "hunter-email-finder", inputs: [emailFindInput(1)] }
      })
      expect(bought.status).toBe(200)

      const { go, page, problems } = await signedIn(org)
      await go(`/receipts/${bought.json.receipt_id}`)
      const receipt = page.getByRole("region", { name: "Receipt" })
      await expect.poll(() => receipt.getByTestId("receipt-money").textContent(), { timeout: 20_000 }).toContain(
        "A test purchase: 1 item priced at"
      )
      await page.getByTestId("receipt-item-0").waitFor()
      expect(await page.getByTestId("receipt-item-0").textContent()).toContain("Item 1")
      await expect.poll(() => receipt.locator("table").textContent()).toContain("syntactically valid address")
      const receiptText = await textOf(page)
      for (const raw of ["1 items", "Item 0", "email_find.deliverable_address@"]) expect(receiptText).not.toContain(raw)

      await go("/tools")
      await expect.poll(() => textOf(page), { timeout: 20_000 }).toContain("syntactically valid address")
      expect(await textOf(page)).not.toContain("email_find.deliverable_address@1.2.0")

      await go("/webhooks")
      await expect.poll(() => textOf(page), { timeout: 20_000 }).toContain(
        "An agent has used 80% of its monthly budget"
      )
      expect(await textOf(page)).not.toContain("budget.80pct")

      await go("/agents")
      const form = page.getByRole("form", { name: "New agent" })
      await form.getByLabel("Name").fill("words")
      await form.getByRole("button", { name: "Create agent" }).click()
      const shown = page.getByRole("region", { name: "Key of words" })
      await shown.waitFor()
      expect(await shown.textContent()).toContain("it is shown only this once")
      expect(await shown.textContent()).not.toContain("SHA-256")
      expect(problems).toEqual([])
    })
  })
}
