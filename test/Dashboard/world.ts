import type { Browser } from "playwright-core"
import type { World } from "../support/world.js"

/**
 * The one service and the one Chromium a Dashboard suite starts, shared by its sections
 * (`test/Dashboard/owner/*.ts`, `test/Dashboard/admin/*.ts`): live bindings, set by the
 * suite's `beforeAll` before any section's own hooks run. Each section opens its own browser
 * context (its own cookies) and signs in its own people.
 */
export let world: World
export let browser: Browser

export const useDashboard = (started: { world: World; browser: Browser }) => {
  world = started.world
  browser = started.browser
}
