import { HttpApiBuilder, HttpServerRequest, HttpServerResponse } from "@effect/platform"
import { NodeHttpServerRequest } from "@effect/platform-node"
import { Effect } from "effect"
import type { IncomingMessage, ServerResponse } from "node:http"
import { AuthorizationServer, OAUTH_PREFIX } from "../../Services/OAuth/AuthorizationServer.js"
import { PublicUrl } from "../../Services/PublicUrl.js"
import { RateLimiter, type RateLimitPolicy } from "../../Services/RateLimiter/RateLimiter.js"
import { ClientAddress } from "../ClientAddress.js"
import { enforceRateLimit } from "../Middleware/RateLimits.js"

/** Dynamic client registrations one address may make. */
export const registrationPolicy: RateLimitPolicy = { name: "oauth-register", limit: 30, windowSeconds: 3600 }

/** Where RFC 8414 puts the metadata of an issuer with a path (`<BASE_URL>/oauth`). */
export const AUTHORIZATION_SERVER_METADATA_PATH = `/.well-known/oauth-authorization-server${OAUTH_PREFIX}`

/**
 * The request as the authorization server reads it: the Node request and response under
 * the platform's, with the forwarded protocol and host set from BASE_URL (the server builds
 * its URLs from them, so they never come from what a client sent) and the mount prefix
 * moved to `originalUrl`, where the library looks for it.
 */
export const providerRequest = (
  request: HttpServerRequest.HttpServerRequest,
  baseUrl: string,
  path?: string
): { readonly req: IncomingMessage & { originalUrl?: string }; readonly res: ServerResponse } => {
  const req: IncomingMessage & { originalUrl?: string } = NodeHttpServerRequest.toIncomingMessage(request)
  const res = NodeHttpServerRequest.toServerResponse(request)
  const base = new URL(baseUrl)
  req.headers["x-forwarded-proto"] = base.protocol.slice(0, -1)
  req.headers["x-forwarded-host"] = base.host
  if (req.originalUrl === undefined) {
    const target = path ?? req.url ?? "/"
    req.originalUrl = target
    req.url = target.slice(OAUTH_PREFIX.length) || "/"
  }
  return { req, res }
}

/**
 * The authorization server's endpoints, under `/oauth` (its own Node handler: metadata at
 * `/oauth/.well-known/openid-configuration`, registration, authorize, token, revocation,
 * keys), and its metadata at the RFC 8414 address as well. The interaction pages under
 * `/oauth/interaction` are the service's own (Consent.ts). The library writes the answer
 * itself; the platform then leaves the finished response alone.
 */
export const OAuthRoutesLive = HttpApiBuilder.Router.use((router) =>
  Effect.gen(function*() {
    const { provider } = yield* AuthorizationServer
    const baseUrl = yield* PublicUrl
    const callback = provider.callback()
    const limiter = yield* RateLimiter
    const addresses = yield* ClientAddress

    const handOver = (path?: string) =>
      Effect.gen(function*() {
        const request = yield* HttpServerRequest.HttpServerRequest
        const { req, res } = providerRequest(request, baseUrl, path)
        yield* Effect.async<void>((resume) => {
          const done = () => resume(Effect.void)
          res.once("finish", done)
          res.once("close", done)
          void callback(req, res)
        })
        return HttpServerResponse.empty({ status: res.statusCode })
      })

    // Registration is open to anyone and a client record stays: counted by address.
    const register = Effect.gen(function*() {
      yield* enforceRateLimit(limiter, registrationPolicy, `ip:${yield* addresses.current}`)
      return yield* handOver()
    })

    yield* router.post(`${OAUTH_PREFIX}/register`, register)
    yield* router.all(`${OAUTH_PREFIX}/*`, handOver())
    yield* router.get(AUTHORIZATION_SERVER_METADATA_PATH, handOver(`${OAUTH_PREFIX}/.well-known/openid-configuration`))
  })
)
