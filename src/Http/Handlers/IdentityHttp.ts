import { HttpServerRequest, HttpServerResponse } from "@effect/platform"
import { Duration, Effect } from "effect"
import type { Origin } from "../../Services/Auth/Sessions.js"
import { ClientAddress } from "../ClientAddress.js"
import { SESSION_COOKIE } from "../Security/Cookies.js"

/** HTTP details of the sign-in flows: where a request comes from, and the cookies set. */

/** The address (socket peer, or X-Forwarded-For behind TRUSTED_PROXIES) and user agent. */
export const requestOrigin = Effect.gen(function*() {
  const request = yield* HttpServerRequest.HttpServerRequest
  const addresses = yield* ClientAddress
  const ip = yield* addresses.current
  return { ip, userAgent: request.headers["user-agent"] } satisfies Origin
})

export const sessionCookieOptions = (secure: boolean) => ({
  httpOnly: true,
  sameSite: "lax" as const,
  secure,
  path: "/",
  maxAge: Duration.days(30)
})

/** Sets the session cookie on a response. */
export const withSessionCookie = (response: HttpServerResponse.HttpServerResponse, token: string, secure: boolean) =>
  HttpServerResponse.unsafeSetCookie(response, SESSION_COOKIE, token, sessionCookieOptions(secure))

/** Clears the session cookie (same attributes, expired). */
export const withoutSessionCookie = (response: HttpServerResponse.HttpServerResponse, secure: boolean) =>
  HttpServerResponse.expireCookie(response, SESSION_COOKIE, { httpOnly: true, sameSite: "lax", secure, path: "/" })
