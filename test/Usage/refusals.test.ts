import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { bearer, seedAgent, seedOrg } from "../support/fixtures.js"
import { request } from "../support/server.js"
import { makeShiftableClock } from "../support/shiftableClock.js"
import { grantTrial, startWorld, topUp, type World } from "../support/world.js"

/**
 * Refusals an owner can see: each agent's requests refused by a limit, counted per UTC day
 * and code in `GET /v1/orgs/{orgId}/usage`, with the latest message; and what the usage
 * answer says about trial limits, test activity and live purchases.
 */
let world: World
const clock = makeShiftableClock()

beforeAll(async () => {
  world = await startWorld("refusals", { provider: true, clock: clock.layer })
})

afterAll(() => world?.close())

const usage = (orgId: string, token: string) =>
  request(`${world.server.url}/v1/orgs/${orgId}/usage`, { headers: bearer(token) })
const gatewayCall = (key: string) =>
  request(`${world.server.url}/v1/call`, { method: "POST", headers: bearer(key), body: { endpoint: "fakeprov/ok" } })
/** The service's day (its clock may have been moved to a rate-limit window's start). */
const today = () => new Date(clock.now()).toISOString().slice(0, 10)

describe("refusals in usage", () => {
  it("counts every refused request per agent, day and code, none lost when they come at once", async () => {
    const org = await seedOrg(world.db)
    const broke = await seedAgent(world.db, org.orgId, { mode: "live", name: "broke" })
    const other = await seedAgent(world.db, org.orgId, { mode: "live", name: "other" })
    // No credits at all: every call is refused before a hold.
    const answers = await Promise.all(Array.from({ length: 40 }, () => gatewayCall(broke.key)))
    expect(answers.every((a) => a.status === 402 && a.json.error.code === "insufficient_credits")).toBe(true)
    const purchase = await request(`${world.server.url}/v1/execute`, {
      method: "POST",
      headers: bearer(other.key),
      body: { tool: "firecrawl-scrape", inputs: [{ url: "https://example.com" }] }
    })
    expect(purchase.json.error.code).toBe("live_execute_unavailable")

    const { json, status } = await usage(org.orgId, org.owner.sessionToken)
    expect(status).toBe(200)
    expect(json.refusals).toHaveLength(2)
    expect(json.refusals).toEqual(expect.arrayContaining([
      expect.objectContaining({
        agent_id: broke.agentId,
        name: "broke",
        day: today(),
        code: "insufficient_credits",
        count: 40,
        last_message: answers[0]!.json.error.message
      }),
      expect.objectContaining({ agent_id: other.agentId, code: "live_execute_unavailable", count: 1 })
    ]))
    expect(json.live_purchases_open).toBe(false)
  })

  it("counts an agent's requests refused by its rate limit", async () => {
    const org = await seedOrg(world.db)
    const agent = await seedAgent(world.db, org.orgId, { mode: "test", name: "hasty" })
    // 600 requests a minute per key: the 601st and later are refused. The burst starts at a
    // minute's start, so the whole minute is before it (a window ending mid-burst would reset the count).
    clock.toNextWindow(60)
    const statuses: Array<number> = []
    for (let batch = 0; batch < 31; batch++) {
      const answers = await Promise.all(
        Array.from({ length: 20 }, () => request(`${world.server.url}/v1/agent`, { headers: bearer(agent.key) }))
      )
      statuses.push(...answers.map((a) => a.status))
    }
    const refused = statuses.filter((s) => s === 429).length
    expect(refused).toBeGreaterThanOrEqual(20)
    const { json } = await usage(org.orgId, org.owner.sessionToken)
    expect(json.refusals).toEqual([expect.objectContaining({ name: "hasty", code: "rate_limited", count: refused })])
  })

  it("leaves out errors that are not limits, and other orgs' refusals", async () => {
    const org = await seedOrg(world.db)
    const agent = await seedAgent(world.db, org.orgId, { mode: "live" })
    const unknown = await request(`${world.server.url}/v1/call`, {
      method: "POST",
      headers: bearer(agent.key),
      body: { endpoint: "fakeprov/no-such-endpoint" }
    })
    expect(unknown.status).toBe(404)
    const stranger = await seedOrg(world.db)
    const theirs = await seedAgent(world.db, stranger.orgId, { mode: "live" })
    expect((await gatewayCall(theirs.key)).status).toBe(402)
    expect((await usage(org.orgId, org.owner.sessionToken)).json.refusals).toEqual([])
  })

  it("shows the trial's hourly limit until the first top-up, then none", async () => {
    const org = await seedOrg(world.db)
    const agent = await seedAgent(world.db, org.orgId, { mode: "live", name: "trial" })
    await grantTrial(world, org.orgId)
    // Calls until the hour's 50 trial credits are spent and the next is refused.
    let refused: { status: number; json: any } | null = null
    for (let i = 0; i < 60 && refused === null; i++) {
      const answer = await gatewayCall(agent.key)
      if (answer.status !== 200) refused = answer
    }
    expect(refused?.json.error.code).toBe("trial_limit")
    const before = (await usage(org.orgId, org.owner.sessionToken)).json
    expect(before.funded).toBe(false)
    expect(before.trial_limit.per_hour.credits).toBe("50")
    expect(Number(before.trial_limit.spent_this_hour.credits)).toBeGreaterThan(0)
    expect(Number(before.trial_limit.spent_this_hour.credits)).toBeLessThanOrEqual(50)
    expect(Date.parse(before.trial_limit.resets_at) % 3_600_000).toBe(0)
    expect(before.refusals).toEqual([expect.objectContaining({ code: "trial_limit", count: 1 })])

    await topUp(world, org.orgId, 10_000n)
    const after = (await usage(org.orgId, org.owner.sessionToken)).json
    expect(after.funded).toBe(true)
    expect(after.trial_limit).toBeNull()
  })

  it("keeps test activity apart from spend", async () => {
    const org = await seedOrg(world.db)
    const tester = await seedAgent(world.db, org.orgId, { mode: "test" })
    const call = await gatewayCall(tester.key)
    expect(call.json.status).toBe("test")
    const { json } = await usage(org.orgId, org.owner.sessionToken)
    expect(json.total_spend.credits).toBe("0")
    expect(json.test_activity).toEqual({
      purchases: 0,
      items: 0,
      calls: 1,
      priced: expect.objectContaining({ credits: call.json.charged.credits })
    })
  })
})
