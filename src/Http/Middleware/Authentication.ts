import { type HttpApi, HttpRouter, HttpServerRequest } from "@effect/platform"
import { Context, Effect, Layer, Option } from "effect"
import { idOrNull, OrgId } from "../../Domain/Ids.js"
import { Forbidden, Unauthenticated } from "../../Errors/ApiErrors.js"
import { Admins } from "../../Services/Auth/Admins.js"
import { Credentials } from "../../Services/Auth/Credentials.js"
import { policies, RateLimiter } from "../../Services/RateLimiter/RateLimiter.js"
import { Refusals } from "../../Services/Usage/Refusals.js"
import { Api } from "../Api.js"
import { ClientAddress } from "../ClientAddress.js"
import { presentedCredential } from "../PresentedCredential.js"
import { AdminAuth, AgentAuth, KeyCheckedAgain, OrgAuth, SessionAuth, SessionOnly } from "../Security/AuthTags.js"
import { enforceRateLimit } from "./RateLimits.js"
import { makeSessionResolver } from "./RequestSite.js"

/**
 * The credential middlewares. Each reads the raw request itself: the platform's bearer
 * decoding accepts a missing header and does not check the `Bearer ` scheme. Org keys
 * outside `/v1/orgs/{orgId}/...` never reach them: the edge middleware refuses those.
 */
const noCredential = new Unauthenticated({ message: "Send an API key or session: Authorization: Bearer <credential>" })

/** The endpoints that declare `KeyCheckedAgain`, as "METHOD /path" (the router's path), with their modes. */
export const keyCheckedAgainRoutesOf = (
  api: HttpApi.HttpApi.Any
): ReadonlyMap<string, ReadonlyArray<"test" | "live">> => {
  const routes = new Map<string, ReadonlyArray<"test" | "live">>()
  for (const group of Object.values((api as unknown as HttpApi.HttpApi.AnyWithProps).groups)) {
    for (const endpoint of Object.values(group.endpoints)) {
      const modes = Context.getOption(endpoint.annotations, KeyCheckedAgain)
      if (Option.isSome(modes)) routes.set(`${endpoint.method} ${endpoint.path}`, modes.value)
    }
  }
  return routes
}
const checkedAgainRoutes = keyCheckedAgainRoutesOf(Api)

/**
 * The modes in which the request's endpoint checks a cached agent key again in its first
 * write, as the endpoint declares: for those its key may come from the cache. None outside
 * the HttpApi's routes (`/mcp`).
 */
const modesCheckedAgain = Effect.map(
  Effect.serviceOption(HttpRouter.RouteContext),
  (route) =>
    route._tag === "Some" ? checkedAgainRoutes.get(`${route.value.route.method} ${route.value.route.path}`) : undefined
)

/**
 * The agent of the current request: its agent key checked (known, active, allowlist) and
 * the request counted against the agent endpoints' limit. Shared by the agent endpoints'
 * middleware and `/mcp`; `missingKey` is the message when no agent key is sent.
 */
export const makeAgentRequestAuthentication = Effect.gen(function*() {
  const credentials = yield* Credentials
  const limiter = yield* RateLimiter
  const addresses = yield* ClientAddress
  const refusals = yield* Refusals
  return (missingKey: string) =>
    Effect.gen(function*() {
      const request = yield* HttpServerRequest.HttpServerRequest
      const { header } = presentedCredential(request)
      if (header?.kind !== "agent_key") return yield* new Unauthenticated({ message: missingKey })
      const agent = yield* credentials.authenticateAgentKey(header.token, yield* addresses.current, {
        cachedModes: yield* modesCheckedAgain
      })
      yield* enforceRateLimit(limiter, policies.agentEndpoints, `agent:${agent.id}`).pipe(
        Effect.tapError(refusals.record(agent))
      )
      return agent
    })
})

export const AgentAuthLive = Layer.effect(
  AgentAuth,
  Effect.map(makeAgentRequestAuthentication, (authenticate) => ({
    agentKey: () => authenticate("Agent endpoints need an agent key (sk_test_... or sk_live_...)")
  }))
)

export const OrgAuthLive = Layer.effect(
  OrgAuth,
  Effect.gen(function*() {
    const credentials = yield* Credentials
    const limiter = yield* RateLimiter
    const addresses = yield* ClientAddress
    const sessionOf = yield* makeSessionResolver
    return {
      orgCredential: () =>
        Effect.gen(function*() {
          const request = yield* HttpServerRequest.HttpServerRequest
          const route = yield* HttpRouter.RouteContext
          const orgId = route.params["orgId"] ?? ""
          const presented = presentedCredential(request)
          if (presented.header?.kind === "org_key") {
            const actor = yield* credentials.orgKeyActor(presented.header.token, orgId, request.method)
            yield* enforceRateLimit(limiter, policies.orgEndpoints, `orgkey:${actor.org_key_id}`)
            return actor
          }
          const session = yield* sessionOf(request)
          if (session === undefined) {
            // Unidentified callers are counted by address.
            yield* enforceRateLimit(limiter, policies.orgEndpoints, `ip:${yield* addresses.current}`)
            return yield* noCredential
          }
          const actor = yield* credentials.sessionActor(session, idOrNull(OrgId, orgId))
          yield* enforceRateLimit(limiter, policies.orgEndpoints, `session:${actor.session_id}`)
          return actor
        })
    }
  })
)

/**
 * Runs before OrgAuth (endpoint middleware wraps the group's), so it tells an unknown or
 * revoked org key (401) from a working one, which may not do this (403).
 */
export const SessionOnlyLive = Layer.effect(
  SessionOnly,
  Effect.gen(function*() {
    const credentials = yield* Credentials
    return Effect.gen(function*() {
      const request = yield* HttpServerRequest.HttpServerRequest
      const { header } = presentedCredential(request)
      if (header?.kind === "org_key") {
        yield* credentials.knownOrgKey(header.token)
        return yield* new Forbidden({ message: "Org keys cannot do this; sign in as an owner" })
      }
    })
  })
)

export const SessionAuthLive = Layer.effect(
  SessionAuth,
  Effect.gen(function*() {
    const credentials = yield* Credentials
    const sessionOf = yield* makeSessionResolver
    return {
      session: () =>
        Effect.gen(function*() {
          const session = yield* sessionOf(yield* HttpServerRequest.HttpServerRequest)
          if (session === undefined) return yield* new Unauthenticated({ message: "Sign in first" })
          return yield* credentials.authenticateSession(session)
        })
    }
  })
)

/** Admin endpoints: an administrator session (`as_...`) and nothing else. */
export const AdminAuthLive = Layer.effect(
  AdminAuth,
  Effect.gen(function*() {
    const admins = yield* Admins
    return {
      adminSession: () =>
        Effect.gen(function*() {
          const request = yield* HttpServerRequest.HttpServerRequest
          const { header } = presentedCredential(request)
          if (header?.kind !== "admin_session") {
            return yield* new Unauthenticated({ message: "Admin endpoints need an administrator session (as_...)" })
          }
          return yield* admins.authenticate(header.token)
        })
    }
  })
)
