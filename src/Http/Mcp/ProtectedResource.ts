import { HttpApiBuilder, HttpServerResponse } from "@effect/platform"
import { Effect } from "effect"
import { PublicUrl } from "../../Services/PublicUrl.js"
import { PROTECTED_RESOURCE_PATH } from "../ExtraRoutes.js"

/**
 * How an MCP client learns to authenticate (OAuth 2.0 Protected Resource Metadata,
 * RFC 9728, as the MCP authorization spec uses it): `/mcp` takes a bearer agent key in the
 * `Authorization` header and names no authorization server, because there is no OAuth flow
 * to run: the key comes from the org's owner. A 401 on `/mcp` points here.
 */

/** The `WWW-Authenticate` value of a 401 on `/mcp`. */
export const mcpChallenge = (baseUrl: string) =>
  `Bearer realm="mcp", resource_metadata="${baseUrl}${PROTECTED_RESOURCE_PATH}/mcp"`

export const protectedResourceMetadata = (baseUrl: string) => ({
  resource: `${baseUrl}/mcp`,
  resource_name: "Agent Purchasing and Gateway Service (MCP)",
  authorization_servers: [],
  bearer_methods_supported: ["header"],
  resource_documentation: `${baseUrl}/docs`,
  // Not part of RFC 9728: said plainly for the people reading a client's log.
  description: "Send an agent key (sk_live_... or sk_test_...) as Authorization: Bearer <key>; an org owner creates it."
})

/** Served at the root path and at the path-suffixed form (`.../mcp`) clients try first. */
export const ProtectedResourceLive = HttpApiBuilder.Router.use((router) =>
  Effect.gen(function*() {
    const response = HttpServerResponse.unsafeJson(protectedResourceMetadata(yield* PublicUrl))
    yield* router.get(PROTECTED_RESOURCE_PATH, Effect.succeed(response))
    yield* router.get(`${PROTECTED_RESOURCE_PATH}/mcp`, Effect.succeed(response))
  })
)
