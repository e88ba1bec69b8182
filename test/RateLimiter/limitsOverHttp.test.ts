import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { expectError, freshIp, makeOrgKey, owner } from "../support/people.js"
import { request } from "../support/server.js"
import { makeShiftableClock } from "../support/shiftableClock.js"
import { call, startWorld, type World } from "../support/world.js"

/**
 * The rate limits' HTTP contract, one service for all of it: public endpoints (120 requests
 * a minute per address, the waitlist 10 an hour) and org endpoints (300 a minute per org key
 * or session, per address when neither), with their RateLimit headers, Retry-After and the
 * 429 rate_limited body. The limiter's own rules (windows, stores) are rateLimiter.test.ts's.
 */
let world: World
// Fixed windows align to the minute: each burst starts at the start of a window (the
// service's time moved there), so it cannot straddle two and no test waits for a boundary.
const clock = makeShiftableClock()

beforeAll(async () => {
  world = await startWorld("rate_limits_http", { smtp: true, twilio: true, clock: clock.layer })
})
afterAll(async () => {
  await world?.close()
})

const burst = async (count: number, send: () => ReturnType<typeof call>) => {
  const answers = []
  for (let i = 0; i < count; i += 25) {
    answers.push(...(await Promise.all(Array.from({ length: Math.min(25, count - i) }, send))))
  }
  return answers
}

describe("org endpoint limits", () => {
  it("a session gets 300 a minute with RateLimit headers, then 429 rate_limited; an org key has its own count", async () => {
    const boss = await owner(world)
    const key = await makeOrgKey(world, boss.token, boss.orgId, "read")
    clock.toNextWindow(60)
    const first = await call(world, "GET", `/v1/orgs/${boss.orgId}/members`, { token: boss.token, ip: freshIp() })
    expect(first.headers.get("ratelimit-limit")).toBe("300")
    expect(first.headers.get("ratelimit-policy")).toBe("300;w=60")
    const remaining = Number(first.headers.get("ratelimit-remaining"))
    // Requests from many addresses still count against the one session.
    const answers = await burst(
      remaining,
      () => call(world, "GET", `/v1/orgs/${boss.orgId}/members`, { token: boss.token, ip: freshIp() })
    )
    expect(answers.every((a) => a.status === 200)).toBe(true)
    expect(answers.map((a) => Number(a.headers.get("ratelimit-remaining"))).sort((a, b) => a - b)[0]).toBe(0)
    const refused = await call(world, "GET", `/v1/orgs/${boss.orgId}/members`, { token: boss.token })
    expectError(refused, 429, "rate_limited")
    expect(Number(refused.headers.get("retry-after"))).toBeGreaterThan(0)
    // The org key and unidentified callers are counted apart.
    expect((await call(world, "GET", `/v1/orgs/${boss.orgId}/members`, { token: key.secret })).status).toBe(200)
    expect((await call(world, "GET", `/v1/orgs/${boss.orgId}/members`, { ip: freshIp() })).status).toBe(401)
  })

  it("unidentified callers are counted by address", async () => {
    const boss = await owner(world)
    const ip = freshIp()
    clock.toNextWindow(60)
    const answers = await burst(300, () => call(world, "GET", `/v1/orgs/${boss.orgId}/members`, { ip }))
    expect(answers.every((a) => a.status === 401)).toBe(true)
    expectError(await call(world, "GET", `/v1/orgs/${boss.orgId}/members`, { ip }), 429, "rate_limited")
    expect((await call(world, "GET", `/v1/orgs/${boss.orgId}/members`, { ip: freshIp() })).status).toBe(401)
    // The next minute counts afresh.
    clock.toNextWindow(60)
    expect((await call(world, "GET", `/v1/orgs/${boss.orgId}/members`, { ip })).status).toBe(401)
  })
})

describe("public rate limits over HTTP", () => {
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
