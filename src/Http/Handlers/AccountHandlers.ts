import { HttpApiBuilder } from "@effect/platform"
import { Effect } from "effect"
import { CurrentUser } from "../../Domain/Current.js"
import { Accounts } from "../../Services/Auth/Accounts.js"
import { Orgs } from "../../Services/Orgs/Orgs.js"
import { RateLimiter, type RateLimitPolicy } from "../../Services/RateLimiter/RateLimiter.js"
import { Api } from "../Api.js"
import { enforceRateLimit } from "../Middleware/RateLimits.js"

/** Phone codes cost money and reach people: at most 5 an hour per account. */
export const phoneCodePolicy: RateLimitPolicy = { name: "phone-code", limit: 5, windowSeconds: 3600 }

export const AccountHandlers = HttpApiBuilder.group(Api, "account", (handlers) =>
  Effect.gen(function*() {
    const accounts = yield* Accounts
    const orgs = yield* Orgs
    const limiter = yield* RateLimiter
    return handlers
      .handle("me", () => Effect.flatMap(CurrentUser, (user) => accounts.me(user.user_id)))
      .handle("myDeletionRequests", () =>
        Effect.flatMap(CurrentUser, (user) =>
          Effect.map(orgs.myDeletionRequests(user.user_id), (deletion_requests) => ({ deletion_requests }))))
      .handle("startPhone", ({ payload }) =>
        Effect.gen(function*() {
          const user = yield* CurrentUser
          yield* enforceRateLimit(limiter, phoneCodePolicy, `user:${user.user_id}`)
          const { expiresAt } = yield* accounts.startPhoneVerification(user.user_id, payload.phone)
          return { status: "sent" as const, expires_at: expiresAt.toISOString() }
        }))
      .handle("verifyPhone", ({ payload }) =>
        Effect.gen(function*() {
          const user = yield* CurrentUser
          return { user: yield* accounts.verifyPhone(user.user_id, payload.code.trim()) }
        }))
      .handle("createOrg", ({ payload }) =>
        Effect.gen(function*() {
          const user = yield* CurrentUser
          return { org: yield* orgs.create(user, payload.name) }
        }))
  }))
