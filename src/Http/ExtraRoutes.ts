import { KEY_DIRECTORY_PATH } from "../Services/BotAuth/KeyDirectory.js"
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
 * The authorization server's endpoints that a browser script calls across origins, with the
 * method each takes: their CORS preflight (`OPTIONS` with `Access-Control-Request-Method`)
 * is answered (Http/Mcp/OAuthRoutes.ts).
 */
export const oauthCorsRoutes: ReadonlyArray<RouteSpec> = [
  { method: "POST", path: `${OAUTH_PREFIX}/token` },
  { method: "POST", path: `${OAUTH_PREFIX}/revoke` },
  { method: "POST", path: `${OAUTH_PREFIX}/register` },
  { method: "GET", path: `${OAUTH_PREFIX}/jwks` },
  { method: "GET", path: `${OAUTH_PREFIX}/.well-known/openid-configuration` },
  { method: "GET", path: `${OAUTH_PREFIX}/.well-known/oauth-authorization-server` }
]

/**
 * The authorization server's routes, exactly those it serves (AuthorizationServer.ts: the
 * library's routes as configured, and the consent pages of Http/Mcp/Consent.ts), so any
 * other path or method under `/oauth` answers the common JSON 404 or 405 at the edge.
 */
export const oauthRoutes: ReadonlyArray<RouteSpec> = [
  ...oauthCorsRoutes,
  ...oauthCorsRoutes.map((route) => ({ method: "OPTIONS", path: route.path })),
  { method: "GET", path: `${OAUTH_PREFIX}/authorize` },
  { method: "GET", path: `${OAUTH_PREFIX}/authorize/:uid` },
  { method: "GET", path: `${OAUTH_PREFIX}/register/:clientId` },
  { method: "GET", path: `${OAUTH_PREFIX}/interaction/:uid` },
  { method: "POST", path: `${OAUTH_PREFIX}/interaction/:uid` },
  { method: "POST", path: `${OAUTH_PREFIX}/interaction/:uid/sign-in` },
  { method: "GET", path: `${OAUTH_PREFIX}/interaction/:uid/verify` }
]

/**
 * Routes served beside the HttpApi groups: the front door, the documentation UI, the OpenAPI
 * document, MCP, its protected-resource metadata and its authorization server, the key
 * directory of the service's request signatures (Web Bot Auth), and the metrics.
 */
export const extraRoutes: ReadonlyArray<RouteSpec> = [
  { method: "GET", path: "/" },
  { method: "GET", path: PROTECTED_RESOURCE_PATH },
  { method: "GET", path: `${PROTECTED_RESOURCE_PATH}/mcp` },
  { method: "GET", path: "/docs" },
  { method: "GET", path: "/openapi.json" },
  { method: "POST", path: "/mcp" },
  { method: "GET", path: `/.well-known/oauth-authorization-server${OAUTH_PREFIX}` },
  ...oauthRoutes,
  { method: "GET", path: KEY_DIRECTORY_PATH },
  { method: "GET", path: "/metrics" },
  { method: "GET", path: "/favicon.ico" }
]

/** The dashboard's pages and files, wherever DASHBOARD_PATH puts them. */
export const dashboardRoutes = (dashboardPath: string): ReadonlyArray<RouteSpec> => [
  { method: "GET", path: dashboardPath },
  { method: "GET", path: `${dashboardPath}/*` }
]
