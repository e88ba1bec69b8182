import type { TestServer } from "../../support/server.js"
import type { World } from "../../support/world.js"

/**
 * The one service this family's wire suite (`../wire.test.ts`) starts, shared by its
 * sections: a live binding, set by the suite's `beforeAll` before any section's own hooks run.
 */
export let world: World

/** A second service on the same database that trusts no proxy (no TRUSTED_PROXIES). */
export let untrusting: TestServer

export const useWorld = (started: World, untrustingServer: TestServer) => {
  world = started
  untrusting = untrustingServer
}
