import { describe, expect, it } from "@effect/vitest"
import { Context, Duration, Effect, Layer, TestClock } from "effect"
import { randomBytes } from "node:crypto"
import { MemoryRateLimitStoreLive } from "../../src/Services/RateLimiter/MemoryRateLimitStore.js"
import { RateLimiter } from "../../src/Services/RateLimiter/RateLimiter.js"
import { RedisRateLimitStoreLive } from "../../src/Services/RateLimiter/RedisRateLimitStore.js"

/**
 * The limiter's rules on the service, without HTTP: fixed windows aligned to the clock, the
 * limit then refusals with remaining and reset, a counter per subject, the same on the
 * memory and the Redis store. Time is the TestClock. The HTTP contract (headers, 429 body,
 * Retry-After) is limitsOverHttp.test.ts's.
 */
const redisUrl = process.env.TEST_REDIS_URL ?? "redis://127.0.0.1:6379"

const stores = {
  memory: MemoryRateLimitStoreLive,
  redis: RedisRateLimitStoreLive(redisUrl)
} as const

for (const [name, store] of Object.entries(stores)) {
  describe(`RateLimiter with the ${name} store`, () => {
    const layer = RateLimiter.Default.pipe(Layer.provide(store))
    /**
     * The limiter built once the test clock reads `time`: a store's schedules (Redis's
     * heartbeat) then start from it instead of catching up from the epoch.
     */
    const limiterAt = (time: number) =>
      Effect.zipRight(TestClock.setTime(time), Effect.map(Layer.build(layer), Context.get(RateLimiter)))
    // Redis keys outlive the test clock's windows; a fresh policy name per run keeps runs apart.
    const policy = () => ({ name: `test-${randomBytes(4).toString("hex")}`, limit: 3, windowSeconds: 60 })

    it.scoped("allows the limit, refuses past it, and reports remaining and reset", () =>
      Effect.gen(function*() {
        // Real wall-clock epoch so Redis PEXPIREAT lands in the future.
        const limiter = yield* limiterAt(Math.floor(Date.now() / 60_000) * 60_000 + 15_000)
        const p = policy()
        const decisions = []
        for (let i = 0; i < 4; i++) decisions.push(yield* limiter.consume(p, "203.0.113.9"))
        expect(decisions.map((d) => d.allowed)).toEqual([true, true, true, false])
        expect(decisions.map((d) => d.remaining)).toEqual([2, 1, 0, 0])
        expect(decisions.every((d) => d.resetSeconds === 45)).toBe(true)
        // Another subject has its own counter.
        expect((yield* limiter.consume(p, "203.0.113.10")).remaining).toBe(2)
      }))

    it.scoped("starts a new window at the next whole minute, not 60 s after the first hit", () =>
      Effect.gen(function*() {
        const start = Math.floor(Date.now() / 60_000) * 60_000 + 50_000
        const limiter = yield* limiterAt(start)
        const p = policy()
        for (let i = 0; i < 3; i++) yield* limiter.consume(p, "s")
        const refused = yield* limiter.consume(p, "s")
        expect(refused.allowed).toBe(false)
        expect(refused.resetSeconds).toBe(10)
        yield* TestClock.adjust(Duration.seconds(10))
        const next = yield* limiter.consume(p, "s")
        expect(next.allowed).toBe(true)
        expect(next.remaining).toBe(2)
        expect(next.resetSeconds).toBe(60)
      }))
  })
}
