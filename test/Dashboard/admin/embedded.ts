import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { afterAll, describe, expect, it } from "vitest"
import { startServer } from "../../support/server.js"
import { newContext, openPage } from "../browser.js"
import { browser } from "../world.js"

/**
 * `npm start` on the embedded default (no DATABASE_URL) shows a working dashboard: a service
 * of its own (the embedded database is its whole point), in the suite's browser.
 */
export const embeddedCases = () => {
  describe("the dashboard on the embedded default", () => {
    const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), "svc-dashboard-"))
    afterAll(() => fs.rmSync(dataDir, { recursive: true, force: true }))

    it("opens the sign-in page, from any dashboard path, without an error", async () => {
      const server = await startServer({ DATA_DIR: dataDir })
      const context = await newContext(browser, server.url)
      try {
        const { page, problems } = await openPage(context)
        for (const at of ["/dashboard", "/dashboard/orgs/someone/agents"]) {
          await page.goto(at)
          await page.getByRole("heading", { name: "Sign in" }).waitFor()
          expect(await page.getByRole("button", { name: "Email me a sign-in link" }).isEnabled()).toBe(true)
        }
        // No identity provider is configured on the embedded default: no button for it.
        expect(await page.getByText("Sign in with your identity provider").count()).toBe(0)
        // The keyboard alone signs in: Tab past the skip link to the address, type it, Enter.
        await page.goto("/dashboard")
        await page.getByRole("heading", { name: "Sign in" }).waitFor()
        await page.keyboard.press("Tab")
        await expect.poll(() => page.evaluate(() => document.activeElement?.textContent)).toContain("Skip to")
        await page.keyboard.press("Tab")
        await expect.poll(() => page.evaluate(() => document.activeElement?.getAttribute("type"))).toBe("email")
        await page.keyboard.type("keyboard@example.com")
        await page.keyboard.press("Enter")
        await page.getByRole("heading", { name: "Check your mail" }).waitFor()
        expect(problems).toEqual([])
      } finally {
        await context.close()
        await server.close()
      }
    })
  })
}
