import { afterAll, beforeAll, describe } from "vitest"
import { startWorld } from "../support/world.js"
import { adminCases } from "./admin/admin.js"
import { consentCases } from "./admin/consent.js"
import { embeddedCases } from "./admin/embedded.js"
import { keyboardCases } from "./admin/keyboard.js"
import { ensureDashboardBuilt, launchBrowser } from "./browser.js"
import { browser, useDashboard, world } from "./world.js"

/**
 * The dashboard's administrators, the MCP sign-in and consent pages, and the dashboard by
 * keyboard and under axe-core, in Chromium against one running service (mail, SMS, a webhook
 * receiver and the Stripe emulator beside it); and the embedded default's own service
 * (`embedded`, which exists to prove `npm start` without a database) in the same browser.
 */
beforeAll(async () => {
  await ensureDashboardBuilt()
  useDashboard({
    world: await startWorld("dashboard_admin", { smtp: true, twilio: true, receiver: true, stripe: true }),
    browser: await launchBrowser()
  })
}, 180_000)

afterAll(async () => {
  await browser?.close()
  await world?.close()
})

describe("administrators", adminCases)
describe("consent", consentCases)
describe("keyboard", keyboardCases)
describe("embedded", embeddedCases)
