import { HttpApp, HttpServerResponse } from "@effect/platform"
import { Effect, Layer } from "effect"
import { RateLimited } from "../../Errors/ApiErrors.js"
import {
  policies,
  type RateLimitDecision,
  RateLimiter,
  type RateLimitPolicy
} from "../../Services/RateLimiter/RateLimiter.js"
import { ClientAddress } from "../ClientAddress.js"
import { PublicRateLimit, WaitlistRateLimit } from "../Security/RateLimitTags.js"

/** The `RateLimit-*` headers (and `Retry-After` when refused) of a decision. */
export const rateLimitHeaders = (decision: RateLimitDecision): Record<string, string> => ({
  "ratelimit-limit": String(decision.limit),
  "ratelimit-remaining": String(decision.remaining),
  "ratelimit-reset": String(decision.resetSeconds),
  "ratelimit-policy": `${decision.policy.limit};w=${decision.policy.windowSeconds}`,
  ...(decision.allowed ? {} : { "retry-after": String(decision.resetSeconds) })
})

/**
 * Counts the request against `policy` for `subject`, puts the headers on whatever answer
 * the request ends with, and fails with 429 `rate_limited` past the limit.
 */
export const enforceRateLimit = (limiter: RateLimiter, policy: RateLimitPolicy, subject: string) =>
  Effect.gen(function*() {
    const decision = yield* limiter.consume(policy, subject)
    const headers = rateLimitHeaders(decision)
    yield* HttpApp.appendPreResponseHandler((_request, response) =>
      Effect.succeed(HttpServerResponse.setHeaders(response, headers))
    )
    if (!decision.allowed) {
      return yield* new RateLimited({
        message: `Too many requests: ${policy.limit} per ${policy.windowSeconds} s; retry in ${decision.resetSeconds} s`
      })
    }
  })

/** A middleware limiting by client address under one policy. */
const byAddress = (policy: RateLimitPolicy) =>
  Effect.gen(function*() {
    const limiter = yield* RateLimiter
    const address = yield* ClientAddress
    return Effect.flatMap(address.current, (ip) => enforceRateLimit(limiter, policy, ip))
  })

export const PublicRateLimitLive = Layer.effect(PublicRateLimit, byAddress(policies.publicData))
export const WaitlistRateLimitLive = Layer.effect(WaitlistRateLimit, byAddress(policies.waitlist))
