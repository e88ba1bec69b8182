import type { TestIdp } from "../../support/oidc.js"
import type { TestServer } from "../../support/server.js"
import type { World } from "../../support/world.js"

/**
 * What the Auth family's wire suite (`../wire.test.ts`) starts, shared by its sections as
 * live bindings set in the suite's `beforeAll` before any section's own hooks run: the
 * service (`world`) and the OpenID Connect provider it signs people in with (`idp`).
 */
export let world: World
export let idp: TestIdp
/** A second service on the same database with no identity provider configured. */
export let withoutIdp: TestServer

export const useWorld = (started: { world: World; idp: TestIdp; withoutIdp: TestServer }) => {
  world = started.world
  idp = started.idp
  withoutIdp = started.withoutIdp
}

/** The service's log lines since it started (it logs everything here), for the secrets' search. */
export const serviceLogLines: Array<string> = []

export const logLine = (line: string) => {
  serviceLogLines.push(line)
}
