import { ConfigProvider, Effect, Layer, ManagedRuntime } from "effect"
import { Redis } from "ioredis"
import { randomBytes } from "node:crypto"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { RateLimiter, type RateLimitPolicy } from "../../src/Services/RateLimiter/RateLimiter.js"
import { RedisRateLimitStoreLive } from "../../src/Services/RateLimiter/RedisRateLimitStore.js"
import { type PrivateRedis, startPrivateRedis } from "../support/privateRedis.js"
import { makeShiftableClock } from "../support/shiftableClock.js"
import { eventually } from "../support/world.js"

/**
 * Limits shared by replicas stay within their tolerance (docs/decisions.md, Hardening): a
 * slow Redis is waited for rather than left, and while Redis is unreachable each replica
 * admits its share of the limit, the hits it counted reaching Redis when it returns. Two
 * replicas (two rate limiters, each with its own Redis connection and memory) on a private
 * redis-server that the test pauses, kills and starts again.
 */
let redis: PrivateRedis
let inspect: Redis
const clock = makeShiftableClock()
const RETRY_AFTER_MS = 5000
const replicas: Array<ReturnType<typeof replica>> = []

beforeAll(async () => {
  redis = await startPrivateRedis()
  inspect = new Redis(redis.url, { maxRetriesPerRequest: 0, retryStrategy: () => 200 })
  inspect.on("error", () => undefined)
})
afterAll(async () => {
  for (const r of replicas) await r.close()
  inspect?.disconnect()
  await redis?.close()
})

/** One replica's rate limiter on the private Redis, with the service's default settings but a quick heartbeat. */
const replica = () => {
  const config = ConfigProvider.fromMap(
    new Map([["RATE_LIMIT_HEARTBEAT_MS", "100"], ["REDIS_RETRY_AFTER_MS", String(RETRY_AFTER_MS)]])
  )
  const runtime = ManagedRuntime.make(
    RateLimiter.Default.pipe(
      Layer.provide(RedisRateLimitStoreLive(redis.url)),
      Layer.provide(Layer.setConfigProvider(config)),
      Layer.provide(clock.layer)
    )
  )
  return {
    consume: (policy: RateLimitPolicy, subject: string) =>
      runtime.runPromise(Effect.flatMap(RateLimiter, (limiter) => limiter.consume(policy, subject))),
    store: () => runtime.runPromise(Effect.flatMap(RateLimiter, (limiter) => limiter.storeState)),
    close: () => runtime.dispose()
  }
}

const started = async () => {
  const r = replica()
  replicas.push(r)
  expect(await r.store()).toBe("redis")
  return r
}

// An hour's window: moving the clock past the breaker a few times stays inside it.
const policy = (limit: number): RateLimitPolicy => ({
  name: `t-${randomBytes(4).toString("hex")}`,
  limit,
  windowSeconds: 3600
})

describe("a slow Redis", () => {
  it("is waited for: requests it answers late are still counted in Redis", async () => {
    const a = await started()
    const p = policy(100)
    clock.toNextWindow(3600)
    expect((await a.consume(p, "s")).remaining).toBe(99)
    // Redis holds every write for 600 ms and then answers (CLIENT PAUSE ends by itself):
    // longer than the 250 ms after which the store used to give up on Redis.
    const pausedAt = performance.now()
    await inspect.call("CLIENT", "PAUSE", "600", "WRITE")
    const decisions = await Promise.all([a.consume(p, "s"), a.consume(p, "s"), a.consume(p, "s")])
    expect(performance.now() - pausedAt).toBeGreaterThanOrEqual(500)
    expect(decisions.map((d) => d.remaining).sort()).toEqual([96, 97, 98])
    expect(await a.store()).toBe("redis")
    // A replica that stops takes its heartbeat out with it.
    await a.close()
    replicas.splice(replicas.indexOf(a), 1)
    expect(await inspect.zcard("rl:replicas")).toBe(0)
  })
})

describe("two replicas with Redis unreachable", () => {
  it("admit the limit between them, and the hits counted in memory reach Redis when it returns", async () => {
    const a = await started()
    const b = await started()
    // Both have counted each other: two entries, each renewed since both were there.
    const both = await eventually(async () => {
      const entries = await inspect.zrange("rl:replicas", 0, -1, "WITHSCORES")
      return entries.length === 4 ? Math.max(Number(entries[1]), Number(entries[3])) : undefined
    }, { what: "both replicas' heartbeats" })
    await eventually(async () => {
      const entries = await inspect.zrange("rl:replicas", 0, -1, "WITHSCORES")
      return entries.length === 4 && Number(entries[1]) > both && Number(entries[3]) > both
    }, { what: "a heartbeat of each replica after both were registered" })

    const p = policy(10)
    const windowStart = clock.toNextWindow(3600)
    await redis.kill()
    const admitted = async (r: typeof a) => {
      let count = 0
      while ((await r.consume(p, "s")).allowed) count++
      return count
    }
    // Each admits half of the limit (it used to admit all of it: twice the limit in all).
    expect(await admitted(a)).toBe(5)
    expect(await admitted(b)).toBe(5)
    expect(await a.store()).toBe("memory_fallback")

    await redis.start()
    // Each replica tries Redis again once its breaker lets it (the clock moved past it).
    for (const r of [a, b]) {
      await eventually(async () => {
        clock.advance(RETRY_AFTER_MS)
        await r.consume(p, "probe")
        return (await r.store()) === "redis"
      }, { timeoutMs: 60_000, intervalMs: 500, what: "the replica back on Redis" })
    }
    // The first hit of each after the return brings its memory hits along (six each: five
    // admitted, one refused), so the restarted, empty Redis holds every hit of the window
    // and the subject stays limited.
    const first = await a.consume(p, "s")
    expect(first.allowed).toBe(true)
    expect((await b.consume(p, "s")).allowed).toBe(false)
    expect((await a.consume(p, "s")).allowed).toBe(false)
    expect(Number(await inspect.get(`rl:${p.name}:s:${windowStart}`))).toBe(6 + 6 + 3)
  }, 120_000)
})
