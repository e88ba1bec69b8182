import type { HttpServerRequest } from "@effect/platform"
import { Effect } from "effect"
import { Forbidden } from "../../Errors/ApiErrors.js"
import { AppConfig } from "../../Services/AppConfig.js"
import { PublicUrl } from "../../Services/PublicUrl.js"
import { presentedCredential, sessionTokenOf } from "../PresentedCredential.js"

/**
 * Where a browser request comes from, by the headers browsers set themselves and pages
 * cannot forge (OWASP's Fetch Metadata and Origin verification): `Origin`, else
 * `Sec-Fetch-Site`, else `Referer`. A request with none of them is not from a browser
 * page (every browser sends `Origin` on a cross-origin POST).
 */
export type RequestSite =
  | { readonly _tag: "Own" }
  | { readonly _tag: "Foreign"; readonly why: string }
  | { readonly _tag: "Unstated" }

const LOOPBACK_HOSTS = new Set(["localhost", "127.0.0.1", "[::1]"])

const originOf = (url: string): string | undefined => {
  try {
    const parsed = new URL(url)
    return parsed.protocol === "http:" || parsed.protocol === "https:" ? parsed.origin : undefined
  } catch {
    return undefined
  }
}

/**
 * The origins that are the service's own: the public address's (BASE_URL). In development
 * also any loopback origin, whatever its port: the service opened as 127.0.0.1 rather than
 * localhost, and the dashboard's development server (Vite) proxying to it.
 */
export const makeOwnOrigin = (publicUrl: string, development: boolean) => {
  const own = originOf(publicUrl)
  return (origin: string): boolean => {
    const parsed = originOf(origin)
    if (parsed === undefined) return false
    if (parsed === own) return true
    if (!development) return false
    const host = new URL(parsed).hostname
    return LOOPBACK_HOSTS.has(host) || host.endsWith(".localhost")
  }
}

export const requestSite = (
  headers: Readonly<Record<string, string | undefined>>,
  isOwnOrigin: (origin: string) => boolean
): RequestSite => {
  const origin = headers["origin"]
  if (origin !== undefined) {
    // `null`: a sandboxed frame, a data: URL, a redirect across sites, a page with no-referrer.
    if (origin.trim() === "null") return { _tag: "Foreign", why: "Origin is null" }
    return isOwnOrigin(origin.trim())
      ? { _tag: "Own" }
      : { _tag: "Foreign", why: `Origin ${origin} is not this service` }
  }
  const fetchSite = headers["sec-fetch-site"]
  if (fetchSite !== undefined) {
    const site = fetchSite.trim().toLowerCase()
    // `none`: the person opened it themselves (address bar, bookmark).
    return site === "same-origin" || site === "none"
      ? { _tag: "Own" }
      : { _tag: "Foreign", why: `Sec-Fetch-Site is ${site}` }
  }
  const referer = headers["referer"]
  if (referer !== undefined) {
    const from = originOf(referer)
    return from !== undefined && isOwnOrigin(from)
      ? { _tag: "Own" }
      : { _tag: "Foreign", why: "Referer is another site" }
  }
  return { _tag: "Unstated" }
}

/** Methods that change nothing (RFC 9110 safe methods): never refused for their origin. */
const SAFE_METHODS = new Set(["GET", "HEAD", "OPTIONS"])

/**
 * The session a request carries, with the one rule that keeps other sites from using a
 * browser's cookie (CSRF): a request that changes something and is authenticated by the
 * session cookie must come from the service's own pages. A request whose site is
 * unstated is refused too (OWASP's advice): only browsers hold the cookie, and scripts
 * send their session as `Authorization: Bearer ss_...`, which no other site can make a
 * browser send. Tokens in the header are never checked: they are not ambient.
 */
export const makeSessionResolver = Effect.gen(function*() {
  const publicUrl = yield* PublicUrl
  const config = yield* AppConfig
  const isOwnOrigin = makeOwnOrigin(publicUrl, !config.isProduction)
  const ownOrigin = originOf(publicUrl) ?? publicUrl
  return (request: HttpServerRequest.HttpServerRequest): Effect.Effect<string | undefined, Forbidden> => {
    const presented = presentedCredential(request)
    const session = sessionTokenOf(presented)
    const fromCookie = session !== undefined && presented.header?.kind !== "session"
    if (!fromCookie || SAFE_METHODS.has(request.method)) return Effect.succeed(session)
    const site = requestSite(request.headers, isOwnOrigin)
    if (site._tag === "Own") return Effect.succeed(session)
    const why = site._tag === "Foreign" ? site.why : "the request names no Origin, Sec-Fetch-Site or Referer"
    return Effect.fail(
      new Forbidden({
        message: `Cross-site request refused (${why}): the session cookie works only for pages of ${ownOrigin}; ` +
          "scripts send the session as Authorization: Bearer ss_..."
      })
    )
  }
})

/**
 * The MCP Streamable HTTP transport's rule against DNS rebinding: a request whose `Origin`
 * is present and not the service's own is refused with 403. MCP clients outside browsers
 * send no Origin.
 */
export const makeMcpOriginCheck = Effect.gen(function*() {
  const publicUrl = yield* PublicUrl
  const config = yield* AppConfig
  const isOwnOrigin = makeOwnOrigin(publicUrl, !config.isProduction)
  return (request: HttpServerRequest.HttpServerRequest): Effect.Effect<void, Forbidden> => {
    const origin = request.headers["origin"]
    if (origin === undefined || (origin.trim() !== "null" && isOwnOrigin(origin.trim()))) return Effect.void
    return Effect.fail(new Forbidden({ message: `Origin ${origin} may not use this MCP server` }))
  }
})
