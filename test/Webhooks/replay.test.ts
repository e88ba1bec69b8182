import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { addMember, seedOrg, seedUser } from "../support/fixtures.js"
import { startReceiver, type TestReceiver } from "../support/receiver.js"
import { makeShiftableClock } from "../support/shiftableClock.js"
import { startWorld, type World } from "../support/world.js"
import { orgApi } from "./support.js"

/**
 * The replay route's contract: who may replay, the request's shape and its errors, and the
 * per-org rate limit. What a replay resends (same ids and bodies, tries and window counted
 * again) is proved on the services in deliveryRules.test.ts.
 */
let world: World
let receiver: TestReceiver
const clock = makeShiftableClock()

beforeAll(async () => {
  world = await startWorld("webhook_replay", { clock: clock.layer })
  receiver = await startReceiver()
})
afterAll(async () => {
  await receiver?.close()
  await world?.close()
})

const endpointOf = async () => {
  const org = await seedOrg(world.db)
  const api = orgApi(world.server.url, org.orgId, org.owner.sessionToken)
  const path = `/replay-${org.orgId}`
  const made = await api.createWebhook({ url: receiver.url.replace("/hook", path) })
  expect(made.status).toBe(201)
  const replay = (body: unknown) => api.send("POST", `/webhooks/${made.json.webhook.id}/replay`, body)
  return { org, api, replay }
}

describe("webhook replay", () => {
  it("is for owners, asks for one event or a time, and is rate-limited per org", async () => {
    const hook = await endpointOf()
    const member = await seedUser(world.db)
    await addMember(world.db, hook.org.orgId, member.userId, "member")
    const asMember = orgApi(world.server.url, hook.org.orgId, member.sessionToken)
    const webhookId = (await hook.api.listWebhooks()).json.webhooks[0].id
    const refused = await asMember.send("POST", `/webhooks/${webhookId}/replay`, { since: new Date(0).toISOString() })
    expect(refused.status).toBe(403)
    expect((await hook.replay({})).json.error.code).toBe("invalid_input")
    expect((await hook.replay({ event_id: crypto.randomUUID(), since: new Date().toISOString() })).status).toBe(400)
    expect((await hook.replay({ event_id: crypto.randomUUID() })).json.error.code).toBe("not_found")
    // An event id that is not a UUID names no event: the same 404 as an unknown one, decided at the edge.
    const malformed = await hook.replay({ event_id: "not-an-event" })
    expect(malformed.status).toBe(404)
    expect(malformed.json.error).toMatchObject({
      code: "not_found",
      message: "This endpoint has no delivery of that event"
    })
    expect((await hook.replay({ since: "yesterday-ish" })).json.error.code).toBe("invalid_input")

    const fresh = await endpointOf()
    const since = new Date(clock.now() + 60_000).toISOString()
    const accepted = await fresh.replay({ since })
    expect(accepted.status).toBe(202)
    expect(accepted.json).toEqual({ replayed: 0, event_ids: [] })
    for (let i = 1; i < 20; i++) expect((await fresh.replay({ since })).status).toBe(202)
    const limited = await fresh.replay({ since })
    expect(limited.status).toBe(429)
    expect(limited.json.error.code).toBe("rate_limited")
  })
})
