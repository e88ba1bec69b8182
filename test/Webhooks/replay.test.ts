import { Webhook } from "standardwebhooks"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { addMember, seedOrg, seedUser } from "../support/fixtures.js"
import { startReceiver, type TestReceiver } from "../support/receiver.js"
import { makeShiftableClock } from "../support/shiftableClock.js"
import { eventually, startWorld, type World } from "../support/world.js"
import { orgApi } from "./support.js"

/**
 * Replay: an owner resends one event, or an endpoint's events since a time (failed ones or
 * all), with the same event ids and bodies; replays are rate-limited per org.
 */
let world: World
let receiver: TestReceiver
const clock = makeShiftableClock()

beforeAll(async () => {
  world = await startWorld("webhook_replay", { emitter: true, clock: clock.layer })
  receiver = await startReceiver()
})
afterAll(async () => {
  await receiver?.close()
  await world?.close()
})

const lowBalance = { type: "balance.low", data: { balance_credits: "4200", balance_usd: "4.200" } } as const

const endpointOf = async () => {
  const org = await seedOrg(world.db)
  const api = orgApi(world.server.url, org.orgId, org.owner.sessionToken)
  const path = `/replay-${org.orgId}`
  const made = await api.createWebhook({ url: receiver.url.replace("/hook", path) })
  expect(made.status).toBe(201)
  const replay = (body: unknown) => api.send("POST", `/webhooks/${made.json.webhook.id}/replay`, body)
  const arrivals = (eventId: string) =>
    receiver.received.filter((r) => r.path === path && r.headers["service-event-id"] === eventId)
  const statusOf = async (eventId: string) =>
    (await api.deliveries()).json.deliveries.find((d: any) => d.event_id === eventId)?.status
  return { org, api, path, secret: made.json.webhook.secret as string, replay, arrivals, statusOf }
}

describe("webhook replay", () => {
  it("resends one event with the same id and body, signed afresh", async () => {
    const hook = await endpointOf()
    const event = await world.emitter.emit(hook.org.orgId, lowBalance)
    await eventually(async () => (await hook.statusOf(event.id)) === "delivered", { what: "the first delivery" })

    const replayed = await hook.replay({ event_id: event.id })
    expect(replayed.status).toBe(202)
    expect(replayed.json).toEqual({ replayed: 1, event_ids: [event.id] })
    const [first, again] = await eventually(() => hook.arrivals(event.id).length >= 2 && hook.arrivals(event.id), {
      what: "the replayed delivery"
    })
    expect(again!.body).toBe(first!.body)
    expect(again!.headers["webhook-id"]).toBe(event.id)
    expect(JSON.parse(again!.body).id).toBe(event.id)
    new Webhook(hook.secret).verify(
      again!.body,
      Object.fromEntries(
        Object.entries(again!.headers).map(([name, value]) => [name, String(value)])
      )
    )
    await eventually(async () => (await hook.statusOf(event.id)) === "delivered", { what: "delivered again" })
  })

  it("resends what failed since a time, or everything since then", async () => {
    const hook = await endpointOf()
    const since = new Date(clock.now() - 1000).toISOString()
    const delivered = await world.emitter.emit(hook.org.orgId, lowBalance)
    await eventually(async () => (await hook.statusOf(delivered.id)) === "delivered", { what: "a delivery" })

    receiver.setMode({ kind: "fail" })
    const failing = await world.emitter.emit(hook.org.orgId, lowBalance)
    await eventually(() => hook.arrivals(failing.id).length === 1, { what: "a first refused try" })
    // Past the 24-hour window the next try is the last: the delivery fails.
    clock.advance("25 hours")
    await eventually(async () => (await hook.statusOf(failing.id)) === "failed", { what: "the failed delivery" })

    // Replayed while the receiver still refuses: the try counts from one again and the
    // delivery has a window of its own, so it waits for its next try instead of failing.
    const onlyFailed = await hook.replay({ since, only_failed: true })
    expect(onlyFailed.status).toBe(202)
    expect(onlyFailed.json).toEqual({ replayed: 1, event_ids: [failing.id] })
    await eventually(() => hook.arrivals(failing.id).length === 2, { what: "the replayed try" })
    const afterTry = await eventually(async () => {
      const row = (await hook.api.deliveries()).json.deliveries.find((d: any) => d.event_id === failing.id)
      return row.attempts === 1 && row
    }, { what: "the replayed try recorded" })
    expect(afterTry.status).toBe("pending")
    expect(Date.parse(afterTry.next_attempt_at) - clock.now()).toBeGreaterThan(30_000)

    receiver.setMode({ kind: "ok" })
    expect((await hook.replay({ event_id: failing.id })).json.event_ids).toEqual([failing.id])
    await eventually(async () => (await hook.statusOf(failing.id)) === "delivered", { what: "the replayed failure" })
    expect(hook.arrivals(delivered.id)).toHaveLength(1)
    expect(new Set(hook.arrivals(failing.id).map((r) => JSON.parse(r.body).id))).toEqual(new Set([failing.id]))

    const everything = await hook.replay({ since })
    expect(everything.json.replayed).toBe(2)
    expect([...everything.json.event_ids].sort()).toEqual([delivered.id, failing.id].sort())
    await eventually(() => hook.arrivals(delivered.id).length === 2, { what: "the delivered event again" })

    const later = await hook.replay({ since: new Date(clock.now() + 60_000).toISOString() })
    expect(later.json).toEqual({ replayed: 0, event_ids: [] })
  })

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
    for (let i = 0; i < 20; i++) expect((await fresh.replay({ since })).status).toBe(202)
    const limited = await fresh.replay({ since })
    expect(limited.status).toBe(429)
    expect(limited.json.error.code).toBe("rate_limited")
  })
})
