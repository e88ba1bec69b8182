import type { World } from "../../support/world.js"

/**
 * The one service the clients' suite (`test/Clients/typescript.test.ts`) starts,
 * shared by its sections: a live binding, set by the suite's `beforeAll` before any
 * section's own hooks run. Each section seeds its own org and agents.
 */
export let world: World

export const useWorld = (started: World) => {
  world = started
}
