import { makeShiftableClock } from "../../support/shiftableClock.js"
import type { World } from "../../support/world.js"
import type { DocumentServer } from "../oauthSupport.js"

/**
 * What the Mcp family's wire suite (`test/Mcp/wire.test.ts`) starts, shared by its sections
 * as live bindings set in the suite's `beforeAll` before any section's own hooks run: the
 * development service (`world`, on the shiftable `clock`), the production one
 * (`production`: only its own public address's origin is its own, no document from a
 * private address) and the https server of client metadata documents.
 */
export const clock = makeShiftableClock()

export let world: World
export let production: World
export let documents: DocumentServer

export const useWorlds = (started: { world: World; production: World; documents: DocumentServer }) => {
  world = started.world
  production = started.production
  documents = started.documents
}
