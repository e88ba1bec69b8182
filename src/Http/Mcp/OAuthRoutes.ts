import { HttpApiBuilder, type HttpRouter, HttpServerRequest, HttpServerResponse } from "@effect/platform"
import { NodeHttpServerRequest } from "@effect/platform-node"
import { Effect } from "effect"
import type { IncomingMessage, ServerResponse } from "node:http"
import { AuthorizationServer, OAUTH_PREFIX } from "../../Services/OAuth/AuthorizationServer.js"
import { PublicUrl } from "../../Services/PublicUrl.js"
import { RateLimiter, type RateLimitPolicy } from "../../Services/RateLimiter/RateLimiter.js"
import { ClientAddress } from "../ClientAddress.js"
import { oauthCorsRoutes } from "../ExtraRoutes.js"
import { errorResponse } from "../Middleware/ErrorResponses.js"
import { enforceRateLimit } from "../Middleware/RateLimits.js"
import { announcesBody } from "../Middleware/RequestChecks.js"
import { ReplayedRequest } from "./ReplayedRequest.js"

/** How long a browser may keep a preflight's answer, as the library's own preflights say. */
const PREFLIGHT_MAX_AGE_SECONDS = 3600

const REGISTER_PATH = `${OAUTH_PREFIX}/register`

/**
 * A cross-origin answer of registration may be read by the page that asked (the library
 * does this itself for its other cross-origin endpoints).
 */
const allowOrigin = (request: HttpServerRequest.HttpServerRequest, res: ServerResponse) => {
  if (res.hasHeader("access-control-allow-origin")) return
  res.setHeader("vary", "Origin")
  res.setHeader("access-control-allow-origin", request.headers["origin"] ?? "*")
}

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
  path?: string,
  body?: string
): { readonly req: IncomingMessage & { originalUrl?: string }; readonly res: ServerResponse } => {
  const source = NodeHttpServerRequest.toIncomingMessage(request)
  const req: IncomingMessage & { originalUrl?: string } = body === undefined
    ? source
    : new ReplayedRequest(source, Buffer.from(body, "utf8"))
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
        // The edge has read (and checked) the body: the server gets it again.
        const body = announcesBody(request.headers) ? yield* request.text : undefined
        const { req, res } = providerRequest(request, baseUrl, path, body)
        if (request.method === "POST" && request.url.split("?", 1)[0] === REGISTER_PATH) allowOrigin(request, res)
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

    /**
     * A CORS preflight is answered as the library answers its own (token, revocation, keys,
     * metadata), and for registration, which the library does not open to other origins, the
     * same way here: a browser-based MCP client registers itself. An OPTIONS that is no
     * preflight asks for nothing the server does: 405 with `Allow`.
     */
    const options = (path: string, method: string) =>
      Effect.gen(function*() {
        const request = yield* HttpServerRequest.HttpServerRequest
        if (request.headers["access-control-request-method"] === undefined) {
          return errorResponse(baseUrl, "method_not_allowed", `OPTIONS is only a CORS preflight on ${path}`).pipe(
            HttpServerResponse.setHeader("allow", `${method}, OPTIONS`)
          )
        }
        if (path !== REGISTER_PATH) return yield* handOver()
        const requested = request.headers["access-control-request-headers"]
        return HttpServerResponse.empty({
          status: 204,
          headers: {
            vary: "Origin",
            "access-control-allow-origin": request.headers["origin"] ?? "*",
            "access-control-max-age": String(PREFLIGHT_MAX_AGE_SECONDS),
            "access-control-allow-methods": method,
            ...(requested === undefined ? {} : { "access-control-allow-headers": requested })
          }
        })
      })

    yield* router.post(REGISTER_PATH, register)
    for (const route of oauthCorsRoutes) {
      yield* router.options(route.path as HttpRouter.PathInput, options(route.path, route.method))
    }
    yield* router.all(`${OAUTH_PREFIX}/*`, handOver())
    yield* router.get(AUTHORIZATION_SERVER_METADATA_PATH, handOver(`${OAUTH_PREFIX}/.well-known/openid-configuration`))
  })
)
