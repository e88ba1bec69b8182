import type { World } from "../../support/world.js"

/**
 * The one service this family's wire suite (`../wire.test.ts`) starts, shared by its
 * sections: a live binding, set by the suite's `beforeAll` before any section's own hooks run.
 */
export let world: World

export const useWorld = (started: World) => {
  world = started
}
