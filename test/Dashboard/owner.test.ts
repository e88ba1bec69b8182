import { afterAll, beforeAll, describe } from "vitest"
import { startWorld } from "../support/world.js"
import { ensureDashboardBuilt, launchBrowser } from "./browser.js"
import { ownerCases } from "./owner/owner.js"
import { ownerViewsCases } from "./owner/ownerViews.js"
import { pagesCases } from "./owner/pages.js"
import { webhooksCases } from "./owner/webhooks.js"
import { browser, useDashboard, world } from "./world.js"

/**
 * The dashboard as an owner uses it, in Chromium against one running service (mail, SMS, a
 * webhook receiver and a data provider beside it): the pages an owner trusts with money,
 * the views of agents and plans, members, disputes and the catalogue, and webhook replay. Each
 * section signs in its own owner, in its own browser context.
 */
beforeAll(async () => {
  await ensureDashboardBuilt()
  useDashboard({
    world: await startWorld("dashboard_owner", { smtp: true, twilio: true, receiver: true, provider: true }),
    browser: await launchBrowser()
  })
}, 180_000)

afterAll(async () => {
  await browser?.close()
  await world?.close()
})

describe("owner", ownerCases)
describe("owner views", ownerViewsCases)
describe("pages", pagesCases)
describe("webhooks", webhooksCases)
