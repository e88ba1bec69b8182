import { OAUTH_PREFIX } from "../Services/OAuth/AuthorizationServer.js"
import type { RouteSpec } from "./RouteTable.js"

/** Where the MCP endpoint's protected-resource metadata is served (RFC 9728). */
export const PROTECTED_RESOURCE_PATH = "/.well-known/oauth-protected-resource"

/**
 * Paths whose handler reads its own body, in the encoding its standard names: the OAuth
 * authorization server and its consent pages take `application/x-www-form-urlencoded`.
 */
export const ownBodyPrefixes: ReadonlyArray<string> = [`${OAUTH_PREFIX}/`]

/**
 * Routes served beside the HttpApi groups: the front door, the documentation UI, the OpenAPI
 * document, MCP, its protected-resource metadata and its authorization server, and the metrics.
 */
export const extraRoutes: ReadonlyArray<RouteSpec> = [
  { method: "GET", path: "/" },
  { method: "GET", path: PROTECTED_RESOURCE_PATH },
  { method: "GET", path: `${PROTECTED_RESOURCE_PATH}/mcp` },
  { method: "GET", path: "/docs" },
  { method: "GET", path: "/openapi.json" },
  { method: "POST", path: "/mcp" },
  { method: "GET", path: `/.well-known/oauth-authorization-server${OAUTH_PREFIX}` },
  { method: "GET", path: `${OAUTH_PREFIX}/*` },
  { method: "POST", path: `${OAUTH_PREFIX}/*` },
  { method: "OPTIONS", path: `${OAUTH_PREFIX}/*` },
  { method: "GET", path: "/metrics" },
  { method: "GET", path: "/favicon.ico" }
]

/** The dashboard's pages and files, wherever DASHBOARD_PATH puts them. */
export const dashboardRoutes = (dashboardPath: string): ReadonlyArray<RouteSpec> => [
  { method: "GET", path: dashboardPath },
  { method: "GET", path: `${dashboardPath}/*` }
]
