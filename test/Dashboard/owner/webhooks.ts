import type { Page } from "playwright-core"
import { beforeAll, describe, expect, it } from "vitest"
import { owner } from "../../support/people.js"
import { call } from "../../support/world.js"
import { accessibilityProblems, newContext, openPage, screenshot } from "../browser.js"
import { browser, world } from "../world.js"

/**
 * An owner resends webhook events and rotates an endpoint's secret from the Webhooks page,
 * in real Chromium against the service and a real receiver: what arrives keeps its event id,
 * and the page speaks the owner's words.
 */
let page: Page
let problems: Array<string>
let dialogs: Array<string>
let person: Awaited<ReturnType<typeof owner>>
const state = { secret: "", eventId: "" }

export const webhooksCases = () => {
  beforeAll(async () => {
    person = await owner(world, "Hooks Org")
    const context = await newContext(browser, world.server.baseUrl)
    await context.addCookies([{ name: "service_session", value: person.token, url: world.server.baseUrl }])
    ;({ dialogs, page, problems } = await openPage(context))
  })

  const arrivalsOf = (eventId: string) =>
    world.receiver.received.filter((r) => r.headers["service-event-id"] === eventId)

  describe("webhook replay and secret rotation from the dashboard", () => {
    it("resends one delivery with its event id unchanged", async () => {
      const made = await call(world, "POST", `/v1/orgs/${person.orgId}/webhooks`, {
        token: person.token,
        body: { url: world.receiver.url }
      })
      expect(made.status).toBe(201)
      state.secret = made.json.webhook.secret
      await page.goto(`/dashboard/orgs/${person.orgId}/webhooks`)
      const endpoint = page.getByTestId(`webhook-${world.receiver.url}`)
      await endpoint.getByRole("button", { name: "Send a test" }).click()
      await expect.poll(() => endpoint.getByRole("status").first().textContent()).toContain("delivered")
      const delivery =
        (await call(world, "GET", `/v1/orgs/${person.orgId}/webhook-deliveries`, { token: person.token }))
          .json.deliveries[0]
      state.eventId = delivery.event_id
      expect(arrivalsOf(state.eventId)).toHaveLength(1)

      const row = page.getByTestId(`delivery-${delivery.id}`)
      await row.getByRole("button", { name: "Resend" }).click()
      await expect.poll(() => row.getByRole("status").textContent()).toContain("Sent again")
      await expect.poll(() => arrivalsOf(state.eventId).length, { timeout: 20_000 }).toBe(2)
      expect(arrivalsOf(state.eventId)[1]!.body).toBe(arrivalsOf(state.eventId)[0]!.body)
      await expect.poll(() => row.textContent(), { timeout: 20_000 }).toContain("delivered")
      expect(problems).toEqual([])
    })

    it("resends an endpoint's events since a time: only the failed ones, or all", async () => {
      const endpoint = page.getByTestId(`webhook-${world.receiver.url}`)
      const form = endpoint.getByRole("form", { name: `Resend events to ${world.receiver.url}` })
      const hourAgo = new Date(Date.now() - 3600_000)
      const local = new Date(hourAgo.getTime() - hourAgo.getTimezoneOffset() * 60_000).toISOString().slice(0, 16)
      await form.getByLabel("Resend since").fill(local)
      // Every delivery succeeded, so there is no failed one to resend.
      expect(await form.getByLabel("Only failed deliveries").isChecked()).toBe(true)
      await form.getByRole("button", { name: "Resend" }).click()
      await expect.poll(() => form.getByRole("status").textContent()).toBe("Nothing to resend since then.")

      await form.getByLabel("Only failed deliveries").uncheck()
      await form.getByRole("button", { name: "Resend" }).click()
      await expect.poll(() => form.getByRole("status").textContent()).toBe("1 event sent again, with the same ids.")
      await expect.poll(() => arrivalsOf(state.eventId).length, { timeout: 20_000 }).toBe(3)
      expect(problems).toEqual([])
    })

    it("rotates the secret, shows the new one once, and says the old one works for 24 hours", async () => {
      const endpoint = page.getByTestId(`webhook-${world.receiver.url}`)
      await endpoint.getByRole("button", { name: "Rotate secret" }).click()
      // Asked in the page, not with the browser's confirm().
      const asked = page.getByRole("dialog", { name: "Rotate secret" })
      expect(await asked.textContent()).toContain("The current one keeps working for 24 hours")
      expect(await accessibilityProblems(page)).toEqual([])
      await asked.getByRole("button", { name: "Rotate secret" }).click()
      expect(dialogs).toEqual([])
      const shown = page.getByRole("region", { name: `New signing secret of ${world.receiver.url}` })
      await shown.waitFor()
      const secret = await shown.getByTestId("secret-value").textContent()
      expect(secret).toMatch(/^whsec_/)
      expect(secret).not.toBe(state.secret)
      const note = (await shown.textContent())!
      expect(note).toContain("The previous secret keeps working for 24 hours")
      expect(note).not.toMatch(/\/v1|signature/i)
      await expect.poll(() => endpoint.textContent()).toContain("The previous secret keeps working until")
      await screenshot(page, "webhooks-rotated-desktop")

      // Meanwhile a delivery is signed with both secrets.
      const before = world.receiver.received.length
      await endpoint.getByRole("button", { name: "Send a test" }).click()
      await expect.poll(() => world.receiver.received.length, { timeout: 20_000 }).toBe(before + 1)
      const signatures = String(world.receiver.received.at(-1)!.headers["webhook-signature"]).split(" ")
      expect(signatures).toHaveLength(2)
      expect(await page.locator("main").innerText()).not.toMatch(/(GET|POST|PUT|DELETE) \/v1/)
      expect(await accessibilityProblems(page)).toEqual([])
      expect(problems).toEqual([])
    })

    it("shows an event's payload from the event log, folded until opened", async () => {
      const event = page.locator(".events li", { hasText: "Test event" }).first()
      const payload = event.locator("pre")
      expect(await payload.isVisible()).toBe(false)
      await event.locator("summary").click()
      await payload.waitFor()
      expect(JSON.parse((await payload.textContent())!)).toEqual({
        message: "Test delivery requested from the webhook settings"
      })
      expect(problems).toEqual([])
    })
  })
}
