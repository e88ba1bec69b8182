import * as OTPAuth from "otpauth"
import { describe, expect, it } from "vitest"
import { emailFindInput, seedBuyer } from "../../Purchasing/support.js"
import { createAdmin } from "../../support/people.js"
import { call } from "../../support/world.js"
import { newContext, openPage } from "../browser.js"
import { browser, world } from "../world.js"

/** Administrators in the dashboard: sign in with password and code, then decide a dispute. */
const password = "a long admin passphrase 42"

export const adminCases = () => {
  describe("the administrators' pages", () => {
    it("sign in with password and code, uphold a dispute with a reason, and see it in the audit log", async () => {
      const admin = await createAdmin(world, "ops-dashboard@example.com", password)
      const { agent } = await seedBuyer(world)
      const bought = await call(world, "POST", "/v1/execute", {
        token: agent.key,
        body: { tool: "hunter-email-finder", inputs: [emailFindInput(1)] }
      })
      const opened = await call(world, "POST", "/v1/disputes", {
        token: agent.key,
        body: { receipt_id: bought.json.receipt_id, item_index: 0, reason: "bounced" }
      })
      expect(opened.status).toBe(201)
      const disputeId: string = opened.json.dispute.id

      const { page, problems } = await openPage(await newContext(browser, world.server.baseUrl))
      await page.goto("/dashboard/admin")
      const form = page.getByRole("form", { name: "Administrator sign-in" })
      await form.getByLabel("Email").fill(admin.email)
      await form.getByLabel("Password").fill(password)
      await form.getByLabel("Code").fill(
        OTPAuth.TOTP.generate({ secret: OTPAuth.Secret.fromBase32(admin.totpSecret), timestamp: Date.now() })
      )
      await form.getByRole("button", { name: "Sign in" }).click()

      await page.getByRole("heading", { name: "Disputes" }).waitFor()
      const card = page.getByTestId(`dispute-${disputeId}`)
      await card.waitFor()
      expect(await card.textContent()).toContain("bounced")
      await card.getByLabel("Reason for the decision").fill("Address bounced on delivery")
      await card.getByRole("button", { name: "Uphold (refund)" }).click()
      await card.waitFor({ state: "detached" })
      const decided = await call(world, "GET", `/v1/disputes/${disputeId}`, { token: agent.key })
      expect(decided.json.dispute).toMatchObject({ status: "upheld", note: "Address bounced on delivery" })

      await page.getByRole("link", { name: "Audit log" }).click()
      const row = page.locator("tbody tr", { hasText: disputeId })
      await row.waitFor()
      expect(await row.textContent()).toContain(admin.email)
      expect(await row.textContent()).toContain("Address bounced on delivery")
      // The administrator's session is not kept anywhere a reload could find it.
      expect(await page.evaluate(() => localStorage.length + sessionStorage.length)).toBe(0)
      expect(problems).toEqual([])
    })
  })
}
