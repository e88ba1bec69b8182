import type { Browser } from "playwright-core"
import { afterAll, beforeAll } from "vitest"
import { ensureDashboardBuilt, launchBrowser, newContext, openPage } from "../Dashboard/browser.js"
import type { SeededOrg } from "../support/fixtures.js"
import { startWorld, type World } from "../support/world.js"

/**
 * The billing pages' journeys in Chromium, each run twice: in a world with Stripe's keys
 * (the Stripe emulator standing in for Stripe) and in one on the development sandbox, both started before the file's tests and
 * closed after them. `signedIn` opens the dashboard as the org's owner.
 */
export const billingBrowserWorlds = (label: string) => {
  const worlds = {} as { stripe: World; sandbox: World }
  let browser: Browser | undefined

  beforeAll(async () => {
    await ensureDashboardBuilt()
    worlds.stripe = await startWorld(label, { stripe: true })
    worlds.sandbox = await startWorld(`${label}_sandbox`)
    browser = await launchBrowser()
  })

  afterAll(async () => {
    await browser?.close()
    await worlds.stripe?.close()
    await worlds.sandbox?.close()
  })

  const signedIn = async (world: World, org: SeededOrg) => {
    const context = await newContext(browser!, world.server.baseUrl)
    await context.addCookies([{ name: "service_session", value: org.owner.sessionToken, url: world.server.baseUrl }])
    return openPage(context)
  }

  return { worlds, signedIn }
}
