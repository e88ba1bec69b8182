import { Cause, Config, Effect, Runtime } from "effect"
import { AppConfig } from "../AppConfig.js"
import { AuthConfig } from "../Auth/AuthConfig.js"
import { PublicUrl } from "../PublicUrl.js"
import { SecretBox } from "../SecretBox/SecretBox.js"
import {
  DOCUMENT_CACHE_SECONDS,
  DOCUMENT_MAX_BYTES,
  documentRefusal,
  makeDocumentFetch
} from "./ClientMetadataDocuments.js"
import { oauthErrorPage } from "./ErrorPage.js"
import { OAuthRecordsRepo } from "./OAuthRecordsRepo.js"
import { makePgAdapter } from "./PgAdapter.js"
import { loadProviderKeys } from "./ProviderKeys.js"
import { importProviderModule } from "./ProviderModule.js"

/** Where the authorization server is mounted; its issuer is `<BASE_URL>/oauth`. */
export const OAUTH_PREFIX = "/oauth"

/** Loopback host names an http redirect URI may use (RFC 8252 section 7.3, and `localhost`). */
const LOOPBACK_HOSTS = new Set(["localhost", "127.0.0.1", "[::1]"])

/** A redirect URI the MCP authorization specification allows: HTTPS, or http on a loopback address. */
export const isHttpsOrLoopback = (uri: string): boolean => {
  const url = URL.parse(uri)
  if (url === null) return false
  return url.protocol === "https:" || (url.protocol === "http:" && LOOPBACK_HOSTS.has(url.hostname))
}

/** The one scope: act as the agent the owner chose, under that agent's rules. */
export const MCP_SCOPE = "mcp"

/**
 * The OAuth 2.1 authorization server for `/mcp` (oidc-provider, configured, not written by
 * hand), as the MCP authorization specification asks: metadata, dynamic client
 * registration and client ID metadata documents (ClientMetadataDocuments.ts), authorization
 * code with PKCE S256 only, resource indicators (the only
 * resource is `<BASE_URL>/mcp`, which every access token names as its audience), short-lived
 * opaque access tokens checked against the store on each use (so a revocation ends them at
 * once), rotating refresh tokens and revocation. Records live in PostgreSQL (PgAdapter.ts);
 * the signing and cookie keys are sealed in the database (ProviderKeys.ts).
 *
 * Who the token acts as is chosen in the consent step (Http/Mcp/Consent.ts) and kept per
 * grant in `oauth_connections` (Connections.ts).
 */
export class AuthorizationServer extends Effect.Service<AuthorizationServer>()("OAuth/AuthorizationServer", {
  dependencies: [OAuthRecordsRepo.Default, SecretBox.Default],
  effect: Effect.gen(function*() {
    const baseUrl = yield* PublicUrl
    const { secureCookies } = yield* AuthConfig
    const { isProduction } = yield* AppConfig
    const accessTokenSeconds = yield* Config.integer("OAUTH_ACCESS_TOKEN_SECONDS").pipe(Config.withDefault(600))
    const { default: Provider, errors } = yield* importProviderModule
    const keys = yield* loadProviderKeys
    const Adapter = yield* makePgAdapter((model) =>
      new errors.InvalidGrant(`${model === "RefreshToken" ? "refresh token" : "authorization code"} already used`)
    )
    const issuer = `${baseUrl}${OAUTH_PREFIX}`
    const resource = `${baseUrl}/mcp`
    const documentFetch = yield* makeDocumentFetch({ isProduction })
    const runtime = yield* Effect.runtime<never>()
    const runPromise = Runtime.runPromise(runtime)

    const provider = new Provider(issuer, {
      adapter: Adapter,
      jwks: { keys: [keys.signing] },
      cookies: {
        keys: [...keys.cookies],
        long: { signed: true, secure: secureCookies, sameSite: "lax" },
        short: { signed: true, secure: secureCookies, sameSite: "lax" }
      },
      // Every client registers itself (dynamic registration) as a public client.
      clientDefaults: {
        grant_types: ["authorization_code", "refresh_token"],
        response_types: ["code"],
        token_endpoint_auth_method: "none"
      },
      // A redirect URI is HTTPS or a loopback address (MCP authorization); others are
      // refused at registration with RFC 7591's error (and a stored client's are re-checked).
      extraClientMetadata: {
        properties: ["redirect_uris"],
        validator: (_ctx, key, value) => {
          if (key !== "redirect_uris" || !Array.isArray(value)) return
          const refused = value.find((uri) => typeof uri === "string" && !isHttpsOrLoopback(uri))
          if (refused === undefined) return
          const error = new errors.InvalidRedirectUri()
          error.error_description =
            `redirect_uris must be https URLs or http URLs of a loopback address (localhost, 127.0.0.1, [::1]); ${refused} is neither`
          throw error
        }
      },
      responseTypes: ["code"],
      scopes: [MCP_SCOPE, "offline_access"],
      // The account is the signed-in person; the agent a grant acts as is the connection's.
      findAccount: (_ctx, sub) => ({ accountId: sub, claims: () => ({ sub }) }),
      features: {
        devInteractions: { enabled: false },
        registration: { enabled: true },
        // A client whose client_id is the https URL of its metadata document needs no registration.
        clientIdMetadataDocument: {
          enabled: true,
          ack: "draft-02",
          cacheDuration: DOCUMENT_CACHE_SECONDS,
          allowFetch: async (_ctx, clientId) => {
            const refusal = await runPromise(documentRefusal(clientId, { isProduction }))
            if (refusal !== undefined) {
              throw new errors.InvalidClient(`client_id metadata document not fetched: ${refusal}`)
            }
            return true
          }
        },
        revocation: { enabled: true },
        userinfo: { enabled: false },
        resourceIndicators: {
          enabled: true,
          // Clients that send no `resource` get the only one there is.
          defaultResource: () => resource,
          useGrantedResource: () => true,
          getResourceServerInfo: (_ctx, indicator) => {
            if (indicator !== resource) throw new errors.InvalidTarget(`Unknown resource; the only one is ${resource}`)
            return {
              scope: MCP_SCOPE,
              audience: resource,
              accessTokenTTL: accessTokenSeconds,
              accessTokenFormat: "opaque"
            }
          }
        }
      },
      // PKCE for every client (S256 is the only method the library knows).
      pkce: { required: () => true },
      issueRefreshToken: (_ctx, client) => client.grantTypeAllowed("refresh_token"),
      rotateRefreshToken: true,
      // Tokens outlive the browser sign-in they came from: the grant is what a revocation ends.
      expiresWithSession: () => false,
      ttl: {
        AccessToken: accessTokenSeconds,
        AuthorizationCode: 60,
        RefreshToken: 30 * 24 * 3600,
        Grant: 365 * 24 * 3600,
        IdToken: 600,
        Interaction: 3600,
        Session: 14 * 24 * 3600
      },
      interactions: { url: (_ctx, interaction) => `${issuer}/interaction/${interaction.uid}` },
      routes: {
        authorization: "/authorize",
        token: "/token",
        registration: "/register",
        revocation: "/revoke",
        jwks: "/jwks"
      },
      fetch: documentFetch,
      fetchResponseBodyLimits: {
        "client_id metadata document": DOCUMENT_MAX_BYTES,
        jwks_uri: DOCUMENT_MAX_BYTES,
        sector_identifier_uri: DOCUMENT_MAX_BYTES
      },
      renderError: (ctx, out, error) => {
        ctx.type = "html"
        // Written by the library itself, past the edge that adds these to the service's pages.
        ctx.set("x-frame-options", "DENY")
        ctx.set("content-security-policy", "frame-ancestors 'none'")
        ctx.body = oauthErrorPage({ ...out }, error as { error_detail?: unknown })
      },
      // Browser-based MCP clients call the token and registration endpoints across origins.
      clientBasedCORS: () => true
    })
    // Its URLs are built from the forwarded headers the mount sets from BASE_URL (OAuthRoutes.ts).
    provider.proxy = true
    // The library answers its own failures with a 500 page; the cause goes to the service's log.
    provider.on("server_error", (_ctx, error) => {
      Runtime.runFork(runtime)(Effect.logError("OAuth authorization server failed", Cause.die(error)))
    })

    return { provider, issuer, resource } as const
  })
}) {}
