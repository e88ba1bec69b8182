import { HttpApiBuilder, HttpServerRequest, HttpServerResponse } from "@effect/platform"
import { HttpApp } from "@effect/platform"
import { Duration, Effect } from "effect"
import { CurrentUser } from "../../Domain/Current.js"
import { normalizeEmail } from "../../Domain/Email.js"
import { InvalidToken, RateLimited } from "../../Errors/ApiErrors.js"
import { AuthConfig } from "../../Services/Auth/AuthConfig.js"
import { Credentials } from "../../Services/Auth/Credentials.js"
import { EmailSignIn } from "../../Services/Auth/EmailSignIn.js"
import { IdentityProvider, IDP_COOKIE } from "../../Services/Auth/IdentityProvider.js"
import { Sessions } from "../../Services/Auth/Sessions.js"
import { Orgs } from "../../Services/Orgs/Orgs.js"
import { PublicUrl } from "../../Services/PublicUrl.js"
import { policies, RateLimiter } from "../../Services/RateLimiter/RateLimiter.js"
import { sha256Hex } from "../../Services/SecretBox/Hashes.js"
import { Api } from "../Api.js"
import { ClientAddress } from "../ClientAddress.js"
import { DASHBOARD_RETURN_PATH } from "../Groups/AuthGroup.js"
import { enforceRateLimit, rateLimitHeaders } from "../Middleware/RateLimits.js"
import { presentedCredential, sessionTokenOf } from "../PresentedCredential.js"
import { requestOrigin, withoutSessionCookie, withSessionCookie } from "./IdentityHttp.js"

const missingToken = new InvalidToken({ message: "This sign-in link has no token; ask for a new one" })

export const AuthHandlers = HttpApiBuilder.group(Api, "auth", (handlers) =>
  Effect.gen(function*() {
    const emailSignIn = yield* EmailSignIn
    const idp = yield* IdentityProvider
    const credentials = yield* Credentials
    const limiter = yield* RateLimiter
    const addresses = yield* ClientAddress
    const config = yield* AuthConfig
    const baseUrl = yield* PublicUrl
    const dashboard = `${baseUrl}${config.dashboardPath}`
    // A `next` that is not a dashboard path (a link someone edited) lands on the dashboard's start.
    const signedIn = (token: string, next: string | undefined) =>
      withSessionCookie(
        HttpServerResponse.redirect(
          next !== undefined && DASHBOARD_RETURN_PATH.test(next) ? `${dashboard}${next}` : dashboard,
          { status: 302 }
        ),
        token,
        config.secureCookies
      )

    return handlers
      .handle("options", () => Effect.succeed({ email: true as const, identity_provider: config.idp._tag === "Some" }))
      .handle("session", () =>
        Effect.gen(function*() {
          const session = sessionTokenOf(presentedCredential(yield* HttpServerRequest.HttpServerRequest))
          if (session === undefined) return { signed_in: false }
          return yield* credentials.authenticateSession(session).pipe(
            Effect.as({ signed_in: true }),
            Effect.catchTags({
              unauthenticated: () => Effect.succeed({ signed_in: false }),
              email_unverified: () => Effect.succeed({ signed_in: false })
            })
          )
        }))
      .handle("emailStart", ({ payload }) =>
        Effect.gen(function*() {
          const ip = yield* addresses.current
          yield* enforceRateLimit(limiter, policies.emailStart, ip)
          // At most 5 mails an hour to one address, whoever asks (counted by a hash of it).
          const address = normalizeEmail(payload.email)
          const perAddress = yield* limiter.consume(policies.emailPerAddress, sha256Hex(address))
          if (!perAddress.allowed) {
            const headers = rateLimitHeaders(perAddress)
            yield* HttpApp.appendPreResponseHandler((_request, response) =>
              Effect.succeed(HttpServerResponse.setHeaders(response, headers))
            )
            return yield* new RateLimited({
              message:
                `At most ${perAddress.limit} sign-in mails an hour go to one address; retry in ${perAddress.resetSeconds} s`
            })
          }
          yield* emailSignIn.start(address, ip, baseUrl, { next: payload.next })
          return { status: "sent" as const }
        }))
      .handle("emailVerifyLink", ({ urlParams }) =>
        Effect.gen(function*() {
          if (urlParams.token === undefined || urlParams.token.length === 0) return yield* missingToken
          const session = yield* emailSignIn.verify(urlParams.token, yield* requestOrigin)
          return signedIn(session.sessionToken, urlParams.next)
        }))
      .handle("emailVerify", ({ payload }) =>
        Effect.gen(function*() {
          const session = yield* emailSignIn.verify(payload.token, yield* requestOrigin)
          return { session_token: session.sessionToken, user_id: session.userId, new_user: session.newUser }
        }))
      .handle("idpStart", () =>
        Effect.gen(function*() {
          const { handle, url } = yield* idp.start(baseUrl)
          return HttpServerResponse.redirect(url, { status: 302 }).pipe(
            HttpServerResponse.unsafeSetCookie(IDP_COOKIE, handle, {
              httpOnly: true,
              sameSite: "lax",
              secure: config.secureCookies,
              path: "/auth/idp",
              maxAge: Duration.minutes(10)
            })
          )
        }))
      .handle("idpCallback", () =>
        Effect.gen(function*() {
          const request = yield* HttpServerRequest.HttpServerRequest
          const queryAt = request.url.indexOf("?")
          const search = queryAt >= 0 ? request.url.slice(queryAt) : ""
          const session = yield* idp.callback(request.cookies[IDP_COOKIE], search, baseUrl, yield* requestOrigin)
          return signedIn(session.sessionToken, undefined).pipe(
            HttpServerResponse.expireCookie(IDP_COOKIE, {
              httpOnly: true,
              sameSite: "lax",
              secure: config.secureCookies,
              path: "/auth/idp"
            })
          )
        }))
  }))

export const AuthSessionHandlers = HttpApiBuilder.group(Api, "authSession", (handlers) =>
  Effect.gen(function*() {
    const sessions = yield* Sessions
    const orgs = yield* Orgs
    const config = yield* AuthConfig
    return handlers
      .handle("logout", () =>
        Effect.gen(function*() {
          const user = yield* CurrentUser
          yield* sessions.revoke(user.session_id)
          return withoutSessionCookie(HttpServerResponse.unsafeJson({ status: "signed_out" }), config.secureCookies)
        }))
      .handle("acceptInvite", ({ payload }) =>
        Effect.gen(function*() {
          const user = yield* CurrentUser
          return { org: yield* orgs.acceptInvite(user, payload.token) }
        }))
  }))
