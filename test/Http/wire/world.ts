import type { World } from "../../support/world.js"

/**
 * The one service the Http family's wire suite (`test/Http/wire.test.ts`) starts, shared by
 * its sections: `world` is a live binding, set by the suite's `beforeAll` before any
 * section's own hooks run.
 */
export const base = "https://api.example.test"

export let world: World

/** The production service beside it, for what only production does (its headers). */
export const productionBase = "https://gateway.example.test"
export let production: World

export const useWorlds = (started: { world: World; production: World }) => {
  world = started.world
  production = started.production
}

/**
 * A link the service answers with its public address, fetched from the running service on
 * loopback; a link elsewhere is a failure.
 */
export const reach = (link: string) => {
  if (!link.startsWith(`${base}/`)) throw new Error(`${link} is not on the service's public address ${base}`)
  return `${world.server.url}${link.slice(base.length)}`
}
