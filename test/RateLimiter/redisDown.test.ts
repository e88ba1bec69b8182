import { expect, layer } from "@effect/vitest"
import { Context, Duration, Effect, Layer, Logger, TestClock, TestContext } from "effect"
import { policies, RateLimiter } from "../../src/Services/RateLimiter/RateLimiter.js"
import { RedisRateLimitStoreLive } from "../../src/Services/RateLimiter/RedisRateLimitStore.js"
import { eventuallyEffect } from "../support/eventually.js"
import { type PrivateRedis, startPrivateRedis } from "../support/privateRedis.js"
import { testConfig } from "../support/testLayers.js"

/**
 * Redis going away, on the rate limiter with the Redis store (REDIS_URL set): requests
 * keep their limits (counted in the replica's memory), the outage is logged once and the
 * store says so (what /v1/status shows: Lifecycle/chaos.test.ts reads it over HTTP while
 * Redis restarts under load), and the store goes back to Redis when it returns. A real
 * redis-server of the suite's own, on a free port, is stopped and started; time is the
 * TestClock, moved past the breaker's REDIS_RETRY_AFTER_MS.
 */
class PrivateRedisTest extends Context.Tag("test/PrivateRedis")<PrivateRedisTest, PrivateRedis>() {
  static readonly Test = Layer.scoped(
    PrivateRedisTest,
    Effect.acquireRelease(Effect.promise(() => startPrivateRedis()), (redis) => Effect.promise(() => redis.close()))
  )
}

const RETRY_AFTER_MS = 200

/**
 * The limiter on the private Redis with the service's Redis store, built once the
 * TestClock reads the machine's time: the store's schedules (its heartbeat) start from it.
 */
const limiterOnPrivateRedis = Effect.gen(function*() {
  const redis = yield* PrivateRedisTest
  yield* TestClock.setTime(Date.now())
  const built = yield* Layer.build(
    RateLimiter.Default.pipe(
      Layer.provide(RedisRateLimitStoreLive(redis.url)),
      Layer.provide(testConfig({ REDIS_RETRY_AFTER_MS: String(RETRY_AFTER_MS) }))
    )
  )
  return Context.get(built, RateLimiter)
})

/** The service's log lines, as a replica writes them. */
const logged: Array<string> = []
const capturedLogs = Logger.replace(
  Logger.defaultLogger,
  Logger.make(({ message }) => {
    logged.push((Array.isArray(message) ? message : [message]).map(String).join(" "))
  })
)
const occurrences = (needle: string) => logged.filter((line) => line.includes(needle)).length

/** Public requests from one address until one is limited; answers how many went through first. */
const requestsUntilLimited = (limiter: RateLimiter) =>
  Effect.gen(function*() {
    for (let sent = 1; sent <= 260; sent++) {
      if (!(yield* limiter.consume(policies.publicData, "203.0.113.7")).allowed) return sent - 1
    }
    return yield* Effect.die("never limited")
  })

// The test services (TestClock) come with the suite's own layer, whatever ran before it in the fork.
layer(Layer.merge(PrivateRedisTest.Test, TestContext.TestContext))((it) => {
  it.scoped("counts in Redis, then in memory while Redis is down (logged once), then in Redis again", () =>
    Effect.gen(function*() {
      const limiter = yield* limiterOnPrivateRedis
      const redis = yield* PrivateRedisTest
      expect((yield* limiter.consume(policies.publicData, "203.0.113.6")).allowed).toBe(true)
      expect(yield* limiter.storeState).toBe("redis")

      yield* Effect.promise(() => redis.kill())
      // Limits still hold while Redis is away: the public limit (120 a minute) is enforced.
      const allowed = yield* requestsUntilLimited(limiter)
      expect(allowed).toBeGreaterThan(0)
      expect(allowed).toBeLessThanOrEqual(120)
      expect(yield* limiter.storeState).toBe("memory_fallback")
      expect(occurrences("Redis unreachable")).toBe(1)

      yield* Effect.promise(() => redis.start())
      // Each try of Redis again waits for the breaker: the clock is moved past it.
      yield* eventuallyEffect(
        Effect.gen(function*() {
          yield* TestClock.adjust(Duration.millis(RETRY_AFTER_MS))
          yield* limiter.consume(policies.publicData, "203.0.113.8")
          return (yield* limiter.storeState) === "redis"
        }),
        { timeoutMs: 60_000, what: "the Redis store" }
      )
      expect(occurrences("Redis unreachable")).toBe(1)
      expect(occurrences("Redis is back")).toBe(1)
    }).pipe(Effect.provide(capturedLogs)))
})
