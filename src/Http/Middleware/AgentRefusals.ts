import type { HttpApi, HttpApiMiddleware } from "@effect/platform"
import { HttpServerRequest } from "@effect/platform"
import { Cache, Duration, Effect, Option } from "effect"
import { AgentsRepo } from "../../Services/Agents/AgentsRepo.js"
import { sha256Hex } from "../../Services/SecretBox/Hashes.js"
import { Refusals } from "../../Services/Usage/Refusals.js"
import { presentedCredential } from "../PresentedCredential.js"
import { AgentAuth } from "../Security/AuthTags.js"

/**
 * Every refusal an agent's request gets reaches its owner (the agent's "Refused this month",
 * Calls filtered to refused, the usage export), counted at one place: the error leaving an
 * agent route, whatever refused it (the allowlist, a disabled agent, a rotated or revoked
 * key, the rate limit, a budget, the balance, frozen credits, the gateway switched off, an
 * expired approval). The edge applies it to the HttpApi's agent endpoints, and `/mcp` to
 * its own answers. Whose refusal it is comes from the key the request sent, current or
 * retired (`AgentsRepo.keyOwner`), read once per key and kept: a key's owner never changes.
 * A refusal already counted where it happened is not counted again (`Refusals.countFailure`).
 * Requests made with an OAuth access token (MCP clients) are counted only where the code
 * that refused them names the agent (the gateway, purchases).
 */

/** The HttpApi's endpoints behind the agent-key middleware, as "METHOD /path" (the route table's path). */
export const agentRoutesOf = (api: HttpApi.HttpApi.Any): ReadonlySet<string> => {
  const routes = new Set<string>()
  const agentAuth = AgentAuth as unknown as HttpApiMiddleware.TagClassAny
  const groups = (api as unknown as HttpApi.HttpApi.AnyWithProps).groups
  for (const group of Object.values(groups)) {
    for (const endpoint of Object.values(group.endpoints)) {
      if (group.middlewares.has(agentAuth) || endpoint.middlewares.has(agentAuth)) {
        routes.add(`${endpoint.method} ${endpoint.path}`)
      }
    }
  }
  return routes
}

/** How many keys' owners are kept in memory, and for how long (only memory is bounded by it). */
const OWNERS_KEPT = 10_000
const OWNER_KEPT_FOR = Duration.minutes(10)

export const makeAgentRefusals = Effect.gen(function*() {
  const refusals = yield* Refusals
  const agents = yield* AgentsRepo
  const owners = yield* Cache.make({
    capacity: OWNERS_KEPT,
    timeToLive: OWNER_KEPT_FOR,
    lookup: (hash: string) => agents.keyOwner(hash)
  })

  /** The agent whose key the request sent, current or retired; none for another credential. */
  const ownerOf = (request: HttpServerRequest.HttpServerRequest) => {
    const { header } = presentedCredential(request)
    if (header?.kind !== "agent_key") return Effect.succeed(Option.none())
    return owners.get(sha256Hex(header.token)).pipe(
      Effect.map(Option.map((owner) => ({ id: owner.agent_id, org_id: owner.org_id }))),
      // Counting is for the owner's view: the agent still gets its own answer when it fails.
      Effect.catchAllCause((cause) => Effect.as(Effect.logWarning("Refusal not counted", cause), Option.none()))
    )
  }

  /** Runs an agent route's `app`, counting the refusal it fails with against the agent. */
  return <A, E, R>(app: Effect.Effect<A, E, R>) =>
    Effect.flatMap(
      HttpServerRequest.HttpServerRequest,
      (request) => refusals.countFailure(app, () => ownerOf(request))
    )
})
