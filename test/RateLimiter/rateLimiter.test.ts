import { describe, expect, it } from "@effect/vitest"
import { Duration, Effect, Layer, TestClock } from "effect"
import { randomBytes } from "node:crypto"
import { afterAll, beforeAll } from "vitest"
import { MemoryRateLimitStoreLive } from "../../src/Services/RateLimiter/MemoryRateLimitStore.js"
import { RateLimiter } from "../../src/Services/RateLimiter/RateLimiter.js"
import { RedisRateLimitStoreLive } from "../../src/Services/RateLimiter/RedisRateLimitStore.js"
import { request } from "../support/server.js"
import { startWorld, type World } from "../support/world.js"

const redisUrl = process.env.TEST_REDIS_URL ?? "redis://127.0.0.1:6379"

const stores = {
  memory: MemoryRateLimitStoreLive,
  redis: RedisRateLimitStoreLive(redisUrl)
} as const

for (const [name, store] of Object.entries(stores)) {
  describe(`RateLimiter with the ${name} store`, () => {
    const layer = RateLimiter.Default.pipe(Layer.provide(store))
    // Redis keys outlive the test clock's windows; a fresh policy name per run keeps runs apart.
    const policy = () => ({ name: `test-${randomBytes(4).toString("hex")}`, limit: 3, windowSeconds: 60 })

    it.scoped("allows the limit, refuses past it, and reports remaining and reset", () =>
      Effect.gen(function*() {
        // Real wall-clock epoch so Redis PEXPIREAT lands in the future.
        yield* TestClock.setTime(Math.floor(Date.now() / 60_000) * 60_000 + 15_000)
        const limiter = yield* RateLimiter
        const p = policy()
        const decisions = []
        for (let i = 0; i < 4; i++) decisions.push(yield* limiter.consume(p, "203.0.113.9"))
        expect(decisions.map((d) => d.allowed)).toEqual([true, true, true, false])
        expect(decisions.map((d) => d.remaining)).toEqual([2, 1, 0, 0])
        expect(decisions.every((d) => d.resetSeconds === 45)).toBe(true)
        // Another subject has its own counter.
        expect((yield* limiter.consume(p, "203.0.113.10")).remaining).toBe(2)
      }).pipe(Effect.provide(layer)))

    it.scoped("starts a new window at the next whole minute, not 60 s after the first hit", () =>
      Effect.gen(function*() {
        const start = Math.floor(Date.now() / 60_000) * 60_000 + 50_000
        yield* TestClock.setTime(start)
        const limiter = yield* RateLimiter
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
      }).pipe(Effect.provide(layer)))
  })
}

describe("public rate limits over HTTP", () => {
  let world: World
  beforeAll(async () => {
    world = await startWorld("ratelimit")
  })
  afterAll(() => world?.close())

  /** Waits out the end of a window so a burst stays inside one window. */
  const awayFromBoundary = async (windowSeconds: number, margin: number) => {
    const intoWindow = (Date.now() / 1000) % windowSeconds
    if (intoWindow > windowSeconds - margin) {
      await new Promise((resolve) => setTimeout(resolve, (windowSeconds - intoWindow + 0.2) * 1000))
    }
  }

  it("allows 120 public requests a minute per address with headers, then 429 with Retry-After", async () => {
    await awayFromBoundary(60, 15)
    let last: Awaited<ReturnType<typeof request>> | undefined
    for (let i = 1; i <= 120; i++) {
      last = await request(`${world.server.url}/v1/task-types`)
      expect(last.status).toBe(200)
      expect(last.headers.get("ratelimit-limit")).toBe("120")
      expect(last.headers.get("ratelimit-remaining")).toBe(String(120 - i))
      expect(last.headers.get("ratelimit-policy")).toBe("120;w=60")
    }
    const reset = Number(last!.headers.get("ratelimit-reset"))
    expect(reset).toBeGreaterThan(0)
    expect(reset).toBeLessThanOrEqual(60)
    const refused = await request(`${world.server.url}/v1/tools`)
    expect(refused.status).toBe(429)
    expect(refused.json.error.code).toBe("rate_limited")
    expect(refused.json.error.retryable).toBe(true)
    expect(Number(refused.headers.get("retry-after"))).toBeGreaterThan(0)
    expect(refused.headers.get("ratelimit-remaining")).toBe("0")
  })

  it("allows 10 waitlist joins an hour per address, then 429", async () => {
    await awayFromBoundary(3600, 20)
    for (let i = 1; i <= 10; i++) {
      const res = await request(`${world.server.url}/v1/waitlist`, {
        method: "POST",
        body: { email: `p${i}@example.com` }
      })
      expect(res.status).toBe(202)
      expect(res.headers.get("ratelimit-policy")).toBe("10;w=3600")
      expect(res.headers.get("ratelimit-remaining")).toBe(String(10 - i))
    }
    const refused = await request(`${world.server.url}/v1/waitlist`, {
      method: "POST",
      body: { email: "p11@example.com" }
    })
    expect(refused.status).toBe(429)
    expect(refused.headers.get("retry-after")).not.toBeNull()
  })
})
