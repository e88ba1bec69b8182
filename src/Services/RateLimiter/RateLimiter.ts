import { Clock, Effect, Layer, Option } from "effect"
import { AppConfig } from "../AppConfig.js"
import { MemoryRateLimitStoreLive } from "./MemoryRateLimitStore.js"
import { RateLimitStore } from "./RateLimitStore.js"
import { RedisRateLimitStoreLive } from "./RedisRateLimitStore.js"

/**
 * Fixed windows aligned to the clock: a 60 s window runs from one whole minute to the
 * next, so every replica agrees on when it resets and `RateLimit-Reset` is exact.
 */
export interface RateLimitPolicy {
  readonly name: string
  readonly limit: number
  readonly windowSeconds: number
}

export interface RateLimitDecision {
  readonly allowed: boolean
  readonly limit: number
  readonly remaining: number
  /** Whole seconds until the window resets (at least 1). */
  readonly resetSeconds: number
  readonly policy: RateLimitPolicy
}

export class RateLimiter extends Effect.Service<RateLimiter>()("RateLimiter/RateLimiter", {
  effect: Effect.gen(function*() {
    const store = yield* RateLimitStore
    /** Counts one request of `subject` under `policy`. */
    const consume = (policy: RateLimitPolicy, subject: string) =>
      Effect.gen(function*() {
        const now = yield* Clock.currentTimeMillis
        const windowMs = policy.windowSeconds * 1000
        const windowStart = Math.floor(now / windowMs) * windowMs
        const windowEnd = windowStart + windowMs
        const count = yield* store.hit(`rl:${policy.name}:${subject}:${windowStart}`, windowEnd)
        return {
          allowed: count <= policy.limit,
          limit: policy.limit,
          remaining: Math.max(0, policy.limit - count),
          resetSeconds: Math.max(1, Math.ceil((windowEnd - now) / 1000)),
          policy
        } satisfies RateLimitDecision
      })
    return { consume, storeState: store.state } as const
  })
}) {}

/** The store REDIS_URL names, or counters in memory when it is unset. */
export const RateLimitStoreLive = Layer.unwrapEffect(
  Effect.map(AppConfig, (config) =>
    Option.match(config.redisUrl, {
      onNone: () => MemoryRateLimitStoreLive,
      onSome: RedisRateLimitStoreLive
    }))
)

/** The policies of the specification's Limits table. */
export const policies = {
  publicData: { name: "public", limit: 120, windowSeconds: 60 },
  waitlist: { name: "waitlist", limit: 10, windowSeconds: 3600 },
  emailStart: { name: "email-start", limit: 20, windowSeconds: 3600 },
  emailPerAddress: { name: "email-address", limit: 5, windowSeconds: 3600 },
  orgEndpoints: { name: "org", limit: 300, windowSeconds: 60 },
  agentEndpoints: { name: "agent", limit: 600, windowSeconds: 60 }
} as const satisfies Record<string, RateLimitPolicy>
