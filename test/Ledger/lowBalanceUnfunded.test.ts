import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { bearer, seedAgent, seedOrg } from "../support/fixtures.js"
import { request } from "../support/server.js"
import { grantTrial, startWorld, topUp, type World } from "../support/world.js"

/**
 * The low-balance alert (`balance.low`) warns that money the owner put in runs out: an org
 * on its trial's credits alone is not alerted (its balance starts at the default threshold);
 * from its first top-up it is.
 */
let world: World

beforeAll(async () => {
  world = await startWorld("lowunfunded", { provider: true })
})

afterAll(() => world?.close())

describe("balance.low before and after the first top-up", () => {
  it("is not emitted on trial credits, and is once the org is funded", async () => {
    const org = await seedOrg(world.db)
    const agent = await seedAgent(world.db, org.orgId, { mode: "live" })
    await grantTrial(world, org.orgId)
    const callOnce = async () => {
      const answer = await request(`${world.server.url}/v1/call`, {
        method: "POST",
        headers: bearer(agent.key),
        body: { endpoint: "fakeprov/ok" }
      })
      expect(answer.json.status).toBe("succeeded")
    }
    const lowAlerts = async () => {
      const events = await request(`${world.server.url}/v1/orgs/${org.orgId}/events?limit=100`, {
        headers: bearer(org.owner.sessionToken)
      })
      return (events.json.events as Array<{ type: string }>).filter((e) => e.type === "balance.low")
    }
    // 5,000 trial credits, at the default $5 alert: the first call takes the balance under it.
    await callOnce()
    await callOnce()
    expect(await lowAlerts()).toEqual([])

    // Funded: 4,980 + 30 = 5,010; two 10-credit calls take it to 4,990, under the alert.
    await topUp(world, org.orgId, 30n)
    await callOnce()
    expect(await lowAlerts()).toEqual([])
    await callOnce()
    await expect.poll(async () => (await lowAlerts()).length).toBe(1)
  })
})
