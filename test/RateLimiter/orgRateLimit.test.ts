import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { expectError, freshIp, makeOrgKey, owner } from "../support/people.js"
import { makeShiftableClock } from "../support/shiftableClock.js"
import { call, startWorld, type World } from "../support/world.js"

/** Org endpoints: 300 requests a minute per org key or session, per address when neither. */
let world: World
// Fixed windows align to the minute: each burst starts at the start of a window (the
// service's time moved there), so it cannot straddle two and no test waits for a boundary.
const clock = makeShiftableClock()

beforeAll(async () => {
  world = await startWorld("id_orglimit", { smtp: true, twilio: true, clock: clock.layer })
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
