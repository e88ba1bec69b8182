import type { HttpServerRequest } from "@effect/platform"
import { type CredentialKind, credentialKindOf } from "../Domain/Secrets.js"
import { SESSION_COOKIE } from "./Security/Cookies.js"

/** The session cookie set by sign-in. */

/**
 * What a request carries: the bearer token of the `Authorization` header (only with the
 * `Bearer ` scheme) and the session cookie. The cookie counts only when the header carries
 * no session token or org key.
 */
export interface PresentedCredential {
  readonly header: { readonly token: string; readonly kind: CredentialKind } | undefined
  readonly cookieSession: string | undefined
}

const BEARER = /^Bearer +(\S+) *$/i

/** The token of an `Authorization: Bearer <token>` header, if the request sends one. */
export const bearerTokenOf = (request: HttpServerRequest.HttpServerRequest): string | undefined => {
  const authorization = request.headers["authorization"]
  return authorization === undefined ? undefined : BEARER.exec(authorization)?.[1]
}

export const presentedCredential = (request: HttpServerRequest.HttpServerRequest): PresentedCredential => {
  const token = bearerTokenOf(request)
  const header = token === undefined ? undefined : { token, kind: credentialKindOf(token) }
  const cookie = request.cookies[SESSION_COOKIE]
  const headerIsSessionOrOrgKey = header?.kind === "session" || header?.kind === "org_key"
  return {
    header,
    cookieSession: !headerIsSessionOrOrgKey && cookie !== undefined && cookie.length > 0 ? cookie : undefined
  }
}

/** The session token to use: the header's if it is one, else the cookie. */
export const sessionTokenOf = (presented: PresentedCredential): string | undefined =>
  presented.header?.kind === "session" ? presented.header.token : presented.cookieSession

/** Where an org key may be used: `/v1/orgs/{orgId}` and below. */
const ORG_KEY_SCOPE = /^\/v1\/orgs\/[^/]+(\/|$)/

/**
 * An org key sent anywhere outside `/v1/orgs/{orgId}/...` (public data, sign-in, account,
 * agent and admin endpoints, `/mcp`) is refused with 403, whatever the route.
 */
export const isOrgKeyOutsideOrgs = (request: HttpServerRequest.HttpServerRequest, pathname: string): boolean =>
  presentedCredential(request).header?.kind === "org_key" && !ORG_KEY_SCOPE.test(pathname)
