import { HttpApiBuilder, HttpApp, HttpServerResponse } from "@effect/platform"
import { Effect } from "effect"
import { CurrentAdmin } from "../../Domain/Current.js"
import { Admins } from "../../Services/Auth/Admins.js"
import { RateLimiter, type RateLimitPolicy } from "../../Services/RateLimiter/RateLimiter.js"
import { Api } from "../Api.js"
import { ClientAddress } from "../ClientAddress.js"
import { enforceRateLimit } from "../Middleware/RateLimits.js"
import { requestOrigin } from "./IdentityHttp.js"

/** Sign-in attempts per address, beside the per-account lock. */
export const adminSignInPolicy: RateLimitPolicy = { name: "admin-sign-in", limit: 60, windowSeconds: 3600 }

export const AdminSignInHandlers = HttpApiBuilder.group(Api, "adminSignIn", (handlers) =>
  Effect.gen(function*() {
    const admins = yield* Admins
    const limiter = yield* RateLimiter
    const addresses = yield* ClientAddress
    return handlers.handle("signIn", ({ payload }) =>
      Effect.gen(function*() {
        yield* enforceRateLimit(limiter, adminSignInPolicy, yield* addresses.current)
        const result = yield* admins.signIn(payload.email, payload.password, payload.code, yield* requestOrigin).pipe(
          Effect.catchTag("AdminLockedOut", ({ error, retryAfterSeconds }) =>
            Effect.zipRight(
              HttpApp.appendPreResponseHandler((_request, response) =>
                Effect.succeed(HttpServerResponse.setHeader(response, "retry-after", String(retryAfterSeconds)))
              ),
              Effect.fail(error)
            ))
        )
        return { session_token: result.token, admin: result.admin, expires_at: result.expiresAt.toISOString() }
      }))
  }))

export const AdminSessionHandlers = HttpApiBuilder.group(Api, "adminSession", (handlers) =>
  Effect.gen(function*() {
    const admins = yield* Admins
    return handlers
      .handle("me", () => Effect.map(CurrentAdmin, (admin) => ({ admin: { id: admin.admin_id, email: admin.email } })))
      .handle("signOut", () =>
        Effect.gen(function*() {
          const admin = yield* CurrentAdmin
          yield* admins.signOut(admin.session_id)
          return { status: "signed_out" as const }
        }))
  }))
