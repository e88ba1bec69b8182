import { describe, expect, it } from "@effect/vitest"
import { Context, Duration, Effect, Layer, TestClock } from "effect"
import { randomBytes } from "node:crypto"
import { afterAll, beforeAll } from "vitest"
import { MemoryRateLimitStoreLive } from "../../src/Services/RateLimiter/MemoryRateLimitStore.js"
import { RateLimiter } from "../../src/Services/RateLimiter/RateLimiter.js"
import { RedisRateLimitStoreLive } from "../../src/Services/RateLimiter/RedisRateLimitStore.js"
import { request } from "../support/server.js"
import { makeShiftableClock } from "../support/shiftableClock.js"
import { startWorld, type World } from "../support/world.js"

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

describe("public rate limits over HTTP", () => {
  // The service's time is moved to the start of a window before each burst, so a burst never
  // straddles two windows and no test waits for a real boundary.
  const clock = makeShiftableClock()
  let world: World
  beforeAll(async () => {
    world = await startWorld("ratelimit", { clock: clock.layer })
  })
  afterAll(() => world?.close())

  it("allows 120 public requests a minute per address with headers, then 429 with Retry-After, until the next minute", async () => {
    const windowStart = clock.toNextWindow(60)
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
    expect(reset).toBeLessThanOrEqual(59)
    const secondsLeft = () => Math.ceil((windowStart + 60_000 - clock.now()) / 1000)
    const leftBefore = secondsLeft()
    const refused = await request(`${world.server.url}/v1/tools`)
    const leftAfter = secondsLeft()
    expect(refused.status).toBe(429)
    expect(refused.json.error.code).toBe("rate_limited")
    expect(refused.json.error.retryable).toBe(true)
    const retryAfter = Number(refused.headers.get("retry-after"))
    // Retry-After names the end of the window: the seconds left of it at the service's time.
    expect(retryAfter).toBeLessThanOrEqual(leftBefore)
    expect(retryAfter).toBeGreaterThanOrEqual(Math.max(1, leftAfter))
    expect(refused.headers.get("ratelimit-remaining")).toBe("0")

    // Still refused one second before the window ends; a full count again in the next one.
    clock.advance(windowStart + 59_000 - clock.now())
    expect((await request(`${world.server.url}/v1/task-types`)).status).toBe(429)
    clock.toNextWindow(60)
    const next = await request(`${world.server.url}/v1/task-types`)
    expect(next.status).toBe(200)
    expect(next.headers.get("ratelimit-remaining")).toBe("119")
  })

  it("allows 10 waitlist joins an hour per address, then 429, until the next hour", async () => {
    clock.toNextWindow(3600)
    const join = (n: number) =>
      request(`${world.server.url}/v1/waitlist`, { method: "POST", body: { email: `p${n}@example.com` } })
    for (let i = 1; i <= 10; i++) {
      const res = await join(i)
      expect(res.status).toBe(202)
      expect(res.headers.get("ratelimit-policy")).toBe("10;w=3600")
      expect(res.headers.get("ratelimit-remaining")).toBe(String(10 - i))
    }
    const refused = await join(11)
    expect(refused.status).toBe(429)
    expect(Number(refused.headers.get("retry-after"))).toBeGreaterThan(3500)
    clock.advance("30 minutes")
    expect((await join(12)).status).toBe(429)
    clock.toNextWindow(3600)
    expect((await join(13)).status).toBe(202)
  })
})
