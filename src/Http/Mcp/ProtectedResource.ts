import { HttpApiBuilder, HttpServerResponse } from "@effect/platform"
import { Effect } from "effect"
import { MCP_SCOPE, OAUTH_PREFIX } from "../../Services/OAuth/AuthorizationServer.js"
import { PublicUrl } from "../../Services/PublicUrl.js"
import { PROTECTED_RESOURCE_PATH } from "../ExtraRoutes.js"

/**
 * How an MCP client learns to authenticate (OAuth 2.0 Protected Resource Metadata,
 * RFC 9728, as the MCP authorization spec uses it): `/mcp` names the service's own
 * authorization server (`<BASE_URL>/oauth`), where a client registers, has an owner sign in
 * and choose the agent it acts as, and gets tokens for `/mcp`. An agent key sent as a
 * bearer works as well. A 401 on `/mcp` points here.
 */

/** The `WWW-Authenticate` value of a 401 on `/mcp`; with `problem` when a token was sent and refused (RFC 6750). */
export const mcpChallenge = (baseUrl: string, problem?: string) =>
  `Bearer realm="mcp", ${
    problem === undefined ? "" : `error="invalid_token", error_description="${problem.replace(/["\\]/g, "")}", `
  }scope="${MCP_SCOPE}", resource_metadata="${baseUrl}${PROTECTED_RESOURCE_PATH}/mcp"`

export const protectedResourceMetadata = (baseUrl: string) => ({
  resource: `${baseUrl}/mcp`,
  resource_name: "Agent Purchasing and Gateway Service (MCP)",
  authorization_servers: [`${baseUrl}${OAUTH_PREFIX}`],
  scopes_supported: [MCP_SCOPE],
  bearer_methods_supported: ["header"],
  resource_documentation: `${baseUrl}/docs`,
  // Not part of RFC 9728: said plainly for the people reading a client's log.
  description: "Sign in with OAuth (an org owner chooses the agent the client acts as), or send an agent key " +
    "(sk_live_... or sk_test_...) as Authorization: Bearer <key>."
})

/** Served at the root path and at the path-suffixed form (`.../mcp`) clients try first. */
export const ProtectedResourceLive = HttpApiBuilder.Router.use((router) =>
  Effect.gen(function*() {
    const response = HttpServerResponse.unsafeJson(protectedResourceMetadata(yield* PublicUrl))
    yield* router.get(PROTECTED_RESOURCE_PATH, Effect.succeed(response))
    yield* router.get(`${PROTECTED_RESOURCE_PATH}/mcp`, Effect.succeed(response))
  })
)
