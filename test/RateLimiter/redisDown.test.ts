import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { type ChildService, killChildService, startChildService } from "../support/childService.js"
import { createTestDatabase, type TestDatabase } from "../support/database.js"
import { type PrivateRedis, startPrivateRedis } from "../support/privateRedis.js"
import { request } from "../support/server.js"
import { eventually } from "../support/world.js"

/**
 * Redis going away: requests keep their limits (counted in the replica's memory), the
 * outage is logged once and shown in /v1/status, and the store goes back to Redis when it
 * returns. A real redis-server of the suite's own, on a free port, is stopped and started.
 */
let db: TestDatabase
let service: ChildService
let redis: PrivateRedis

// The service trusts loopback as a proxy, so each part of the test can speak for its own client address.
let statusClients = 0
const storeState = async () => {
  const answer = await request(`${service.url}/v1/status`, {
    headers: { "x-forwarded-for": `198.51.100.${++statusClients % 250}` }
  })
  expect(answer.status).toBe(200)
  return answer.json.rate_limits.store
}

/** Public requests until one is limited; answers how many went through first. */
const requestsUntilLimited = async () => {
  for (let sent = 1; sent <= 260; sent++) {
    const answer = await request(`${service.url}/v1/task-types`, { headers: { "x-forwarded-for": "203.0.113.7" } })
    if (answer.status === 429) {
      expect(answer.json.error.code).toBe("rate_limited")
      return sent - 1
    }
    expect(answer.status).toBe(200)
  }
  throw new Error("never limited")
}

beforeAll(async () => {
  redis = await startPrivateRedis()
  db = await createTestDatabase("redis_down")
  service = await startChildService({
    DATABASE_URL: db.url,
    REDIS_URL: redis.url,
    REDIS_RETRY_AFTER_MS: "200",
    TRUSTED_PROXIES: "127.0.0.1"
  })
}, 120_000)

afterAll(async () => {
  if (service !== undefined) await killChildService(service)
  await redis?.close()
  await db?.drop()
})

const occurrences = (text: string, needle: string) => text.split(needle).length - 1

describe("rate limits with Redis failing", () => {
  it("counts in Redis, then in memory while Redis is down (logged once), then in Redis again", async () => {
    expect(await storeState()).toBe("redis")

    await redis.kill()
    // Limits still hold while Redis is away: the public limit (120 a minute) is enforced.
    const allowed = await requestsUntilLimited()
    expect(allowed).toBeGreaterThan(0)
    expect(allowed).toBeLessThanOrEqual(120)
    expect(await storeState()).toBe("memory_fallback")
    expect(occurrences(service.output(), "Redis unreachable")).toBe(1)

    await redis.start()
    await eventually(async () => {
      await request(`${service.url}/v1/task-types`, { headers: { "x-forwarded-for": "203.0.113.8" } })
      return (await storeState()) === "redis"
    }, { timeoutMs: 60_000, what: "the Redis store" })
    await eventually(async () => service.output().includes("Redis is back"), { timeoutMs: 60_000 })
    expect(occurrences(service.output(), "Redis unreachable")).toBe(1)
    expect(occurrences(service.output(), "Redis is back")).toBe(1)
  }, 180_000)
})
