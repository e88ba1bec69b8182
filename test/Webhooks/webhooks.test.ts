import { Webhook } from "standardwebhooks"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { verifyWebhook } from "../../clients/typescript/src/webhooks.js"
import { subscribableEventTypes, webhookEventJsonSchema } from "../../src/Domain/Events.js"
import { standardSignatureHeader } from "../../src/Services/Webhooks/Signature.js"
import { addMember, seedOrg, seedOrgKey, seedUser } from "../support/fixtures.js"
import { closedPort } from "../support/receiver.js"
import { request } from "../support/server.js"
import { makeShiftableClock } from "../support/shiftableClock.js"
import { eventually, startWorld, type World } from "../support/world.js"
import { independentlyVerify, orgApi } from "./support.js"

/**
 * The webhook routes' wire in one suite (one service): endpoints, deliveries as received,
 * lists, notification settings, replay, and Standard Webhooks signing across a secret
 * rotation. The service's time is a shiftable clock (real time plus an offset that the
 * rotation's cases move forward, last of all).
 */
let world: World
const clock = makeShiftableClock()

beforeAll(async () => {
  world = await startWorld("events_webhooks", { emitter: true, receiver: true, clock: clock.layer })
})

afterAll(() => world?.close())

const errorBody = (code: string) => ({
  error: { code, message: expect.any(String), doc_url: `${world.server.baseUrl}/docs/errors#${code}`, retryable: false }
})

const ownerOrg = async () => {
  const org = await seedOrg(world.db)
  return { ...org, api: orgApi(world.server.url, org.orgId, org.owner.sessionToken) }
}

const deliveryOf = async (api: ReturnType<typeof orgApi>, eventId: string) => {
  const { json } = await api.deliveries()
  return json.deliveries.find((d: any) => d.event_id === eventId)
}

const lowBalance = { type: "balance.low", data: { balance_credits: "4200", balance_usd: "4.200" } } as const

describe("webhook endpoints", () => {
  it("creates an endpoint, shows its whsec_ secret only in that answer, and lists it for members", async () => {
    const org = await ownerOrg()
    const created = await org.api.createWebhook({ url: world.receiver.url })
    expect(created.status).toBe(201)
    expect(created.json).toEqual({
      webhook: {
        id: expect.stringMatching(/^[0-9a-f-]{36}$/),
        secret: expect.stringMatching(/^whsec_[0-9A-Za-z]{44}$/),
        url: world.receiver.url,
        events: [],
        created_at: expect.any(String)
      },
      note: expect.any(String)
    })
    const member = await seedUser(world.db)
    await addMember(world.db, org.orgId, member.userId, "member")
    const listed = await orgApi(world.server.url, org.orgId, member.sessionToken).listWebhooks()
    expect(listed.status).toBe(200)
    expect(listed.json.webhooks).toEqual([
      {
        id: created.json.webhook.id,
        url: world.receiver.url,
        events: [],
        secret_prefix: created.json.webhook.secret.slice(0, 12),
        previous_secret_expires_at: null,
        created_at: created.json.webhook.created_at
      }
    ])
    expect(listed.text).not.toContain(created.json.webhook.secret)
    expect(listed.json.event_types).toEqual([...subscribableEventTypes])
    expect(listed.json.event_types).toHaveLength(9)
    // The secret is not stored in clear.
    const rows = await world.db.query(`SELECT * FROM webhook_endpoints WHERE id = $1`, [created.json.webhook.id])
    expect(JSON.stringify(rows)).not.toContain(created.json.webhook.secret)
  })

  it("keeps a picked list of event types and refuses unknown ones with 400 invalid_input", async () => {
    const org = await ownerOrg()
    const picked = await org.api.createWebhook({
      url: world.receiver.url,
      events: ["job.completed", "balance.low", "balance.low"]
    })
    expect(picked.status).toBe(201)
    expect(picked.json.webhook.events).toEqual(["balance.low", "job.completed"])
    const unknown = await org.api.createWebhook({ url: world.receiver.url, events: ["balance.low", "balance.lowish"] })
    expect(unknown.status).toBe(400)
    expect(unknown.json).toEqual(errorBody("invalid_input"))
    expect(unknown.json.error.message).toContain("balance.lowish")
    const test = await org.api.createWebhook({ url: world.receiver.url, events: ["webhook.test"] })
    expect(test.status).toBe(400)
    expect(test.json.error.code).toBe("invalid_input")
    const notAList = await org.api.createWebhook({ url: world.receiver.url, events: "balance.low" })
    expect(notAList.status).toBe(400)
    expect(notAList.json.error.code).toBe("invalid_input")
    const noUrl = await org.api.createWebhook({ events: [] })
    expect(noUrl.status).toBe(400)
    expect(noUrl.json.error.code).toBe("invalid_input")
  })

  it("refuses URLs that are not https to a public address or http to loopback (development)", async () => {
    const org = await ownerOrg()
    for (
      const url of [
        "not a url",
        "ftp://127.0.0.1/hook",
        "http://93.184.216.34/hook",
        "https://10.0.0.1/hook",
        "https://user:pass@93.184.216.34/hook",
        "https://169.254.169.254/latest/meta-data"
      ]
    ) {
      const answer = await org.api.createWebhook({ url })
      expect(answer.status, url).toBe(400)
      expect(answer.json, url).toEqual(errorBody("invalid_input"))
    }
    for (
      const url of [
        "http://localhost:9/hook",
        "http://127.0.0.1:9/hook",
        "http://[::1]:9/hook",
        "https://93.184.216.34/hook"
      ]
    ) {
      const answer = await org.api.createWebhook({ url })
      expect(answer.status, url).toBe(201)
    }
  })

  it("lets owners and write keys change endpoints; members and read keys get 403 forbidden", async () => {
    const org = await ownerOrg()
    const member = await seedUser(world.db)
    await addMember(world.db, org.orgId, member.userId, "member")
    const memberApi = orgApi(world.server.url, org.orgId, member.sessionToken)
    const made = await org.api.createWebhook({ url: world.receiver.url, events: ["balance.low"] })

    const byMember = await memberApi.createWebhook({ url: world.receiver.url })
    expect(byMember.status).toBe(403)
    expect(byMember.json).toEqual(errorBody("forbidden"))
    expect((await memberApi.deleteWebhook(made.json.webhook.id)).status).toBe(403)
    expect((await memberApi.testWebhook(made.json.webhook.id)).status).toBe(403)
    expect((await memberApi.setNotifications({ low_balance_usd: 1 })).status).toBe(403)

    const readKey = await seedOrgKey(world.db, org.orgId, org.owner, "read")
    const readApi = orgApi(world.server.url, org.orgId, readKey.secret)
    const byRead = await readApi.createWebhook({ url: world.receiver.url })
    expect(byRead.status).toBe(403)
    expect(byRead.json).toEqual(errorBody("forbidden"))
    expect((await readApi.listWebhooks()).status).toBe(200)
    expect((await readApi.events()).status).toBe(200)
    expect((await readApi.deliveries()).status).toBe(200)

    const writeKey = await seedOrgKey(world.db, org.orgId, org.owner, "write")
    const writeApi = orgApi(world.server.url, org.orgId, writeKey.secret)
    const byWrite = await writeApi.createWebhook({ url: world.receiver.url })
    expect(byWrite.status).toBe(201)
    expect((await writeApi.deleteWebhook(byWrite.json.webhook.id)).json).toEqual({
      id: byWrite.json.webhook.id,
      status: "deleted"
    })

    // A write key acts with its maker's current role: once the maker is a member, it cannot.
    const demoted = await seedUser(world.db)
    await addMember(world.db, org.orgId, demoted.userId, "owner")
    const demotedKey = await seedOrgKey(world.db, org.orgId, demoted, "write")
    await world.db.query(`UPDATE org_members SET role = 'member' WHERE org_id = $1 AND user_id = $2`, [
      org.orgId,
      demoted.userId
    ])
    expect(
      (await orgApi(world.server.url, org.orgId, demotedKey.secret).createWebhook({ url: world.receiver.url })).status
    ).toBe(403)

    // Another org's owner sees nothing of this org.
    const other = await ownerOrg()
    const cross = await orgApi(world.server.url, org.orgId, other.owner.sessionToken).listWebhooks()
    expect(cross.status).toBe(404)
    expect((await other.api.deleteWebhook(made.json.webhook.id)).status).toBe(404)
  })

  it("allows at most 10 endpoints; the 11th answers 402 plan_limit", async () => {
    const org = await ownerOrg()
    const made = await Promise.all(Array.from({ length: 10 }, () => org.api.createWebhook({ url: world.receiver.url })))
    expect(made.map((r) => r.status)).toEqual(Array(10).fill(201))
    const eleventh = await org.api.createWebhook({ url: world.receiver.url })
    expect(eleventh.status).toBe(402)
    expect(eleventh.json).toEqual(errorBody("plan_limit"))
    expect((await org.api.deleteWebhook(made[0]!.json.webhook.id)).status).toBe(200)
    expect((await org.api.createWebhook({ url: world.receiver.url })).status).toBe(201)
  })

  it("removes an endpoint: 404 for an unknown or removed one, and its pending deliveries stop", async () => {
    const org = await ownerOrg()
    const port = await closedPort()
    const made = await org.api.createWebhook({ url: `http://127.0.0.1:${port}/hook` })
    const event = await world.emitter.emit(org.orgId, lowBalance)
    const pending = await eventually(async () => {
      const d = await deliveryOf(org.api, event.id)
      return d?.attempts === 1 ? d : undefined
    })
    expect(pending.status).toBe("pending")
    expect((await org.api.deleteWebhook(made.json.webhook.id)).status).toBe(200)
    const after = await deliveryOf(org.api, event.id)
    expect(after).toMatchObject({ status: "failed", last_error: "Endpoint deleted", next_attempt_at: null })
    const again = await org.api.deleteWebhook(made.json.webhook.id)
    expect(again.status).toBe(404)
    expect(again.json).toEqual(errorBody("not_found"))
    expect((await org.api.deleteWebhook("00000000-0000-4000-8000-000000000000")).status).toBe(404)
    expect((await org.api.deleteWebhook("not-a-uuid")).status).toBe(404)
    expect((await org.api.testWebhook(made.json.webhook.id)).status).toBe(404)
    expect((await org.api.listWebhooks()).json.webhooks).toEqual([])
  })
})

describe("delivery", () => {
  it("POSTs the event with exactly the spec's and Standard Webhooks' headers, and a signature an independent verifier accepts", async () => {
    const org = await ownerOrg()
    const path = `/hook-${org.orgId}`
    const made = await org.api.createWebhook({ url: world.receiver.url.replace("/hook", path) })
    const secret: string = made.json.webhook.secret
    const event = await world.emitter.emit(org.orgId, lowBalance)
    const got = await eventually(() => world.receiver.received.find((r) => r.path === path))
    expect(got.method).toBe("POST")
    const names = got.rawHeaders.map(([name]) => name)
    for (const name of ["Content-Type", "User-Agent", "Service-Event-Id", "Service-Event-Type", "Service-Signature"]) {
      expect(names, name).toContain(name)
    }
    // Nothing else but what HTTP itself needs and the Standard Webhooks headers (test/Webhooks/standardWebhooks.test.ts).
    expect([...names].sort()).toEqual(
      [
        "Connection",
        "Content-Length",
        "Content-Type",
        "Host",
        "Service-Event-Id",
        "Service-Event-Type",
        "Service-Signature",
        "User-Agent",
        "webhook-id",
        "webhook-signature",
        "webhook-timestamp"
      ]
    )
    const header = (name: string) => got.rawHeaders.find(([n]) => n === name)?.[1]
    expect(header("Content-Type")).toBe("application/json")
    expect(header("User-Agent")).toBe("Service-Webhooks/1.0")
    expect(header("Service-Event-Id")).toBe(event.id)
    expect(header("Service-Event-Type")).toBe("balance.low")
    const signature = header("Service-Signature")!
    expect(signature).toMatch(/^t=\d+,v1=[0-9a-f]{64}$/)
    const check = independentlyVerify(secret, signature, got.body)
    expect(check.valid).toBe(true)
    expect(Math.abs(check.t - Math.floor(got.receivedAt / 1000))).toBeLessThanOrEqual(5)
    // Another secret: its last character changed (to "x", or to "y" when it already was "x").
    const otherSecret = secret.slice(0, -1) + (secret.endsWith("x") ? "y" : "x")
    expect(independentlyVerify(otherSecret, signature, got.body).valid).toBe(false)
    expect(independentlyVerify(secret, signature, got.body.replace("4200", "4201")).valid).toBe(false)

    const envelope = JSON.parse(got.body)
    expect(envelope).toEqual({
      id: event.id,
      type: "balance.low",
      created_at: expect.stringMatching(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/),
      data: { balance_credits: "4200", balance_usd: "4.200" }
    })
    // The same envelope is what GET /events answers.
    const listed = await org.api.events()
    expect(listed.json.events[0]).toEqual(envelope)
    // And the exported receiver verifier accepts it.
    expect(verifyWebhook({ rawBody: got.body, signature, secret })).toEqual(envelope)

    const delivery = await eventually(async () => {
      const d = await deliveryOf(org.api, event.id)
      return d?.status === "delivered" ? d : undefined
    })
    expect(delivery).toEqual({
      id: expect.any(String),
      webhook_id: made.json.webhook.id,
      event_id: event.id,
      event_type: "balance.low",
      status: "delivered",
      attempts: 1,
      last_status_code: 200,
      last_error: null,
      next_attempt_at: null,
      last_attempt_at: expect.any(String),
      delivered_at: expect.any(String),
      created_at: envelope.created_at
    })
  })

  it("delivers only the picked types to an endpoint with a list, and every type to one without", async () => {
    const org = await ownerOrg()
    const picky = await org.api.createWebhook({
      url: world.receiver.url.replace("/hook", `/picky-${org.orgId}`),
      events: ["job.completed"]
    })
    const all = await org.api.createWebhook({ url: world.receiver.url.replace("/hook", `/all-${org.orgId}`) })
    const low = await world.emitter.emit(org.orgId, lowBalance)
    const job = await world.emitter.emit(org.orgId, {
      type: "job.completed",
      data: { job_id: "j1", status: "done", receipt_id: "r1", item_count: 30, passed: 29, expired: 1 }
    })
    await eventually(() =>
      world.receiver.received.filter((r) => r.path.endsWith(org.orgId)).length >= 3 ? true : undefined
    )
    const { json } = await org.api.deliveries()
    const pairs = json.deliveries.map((d: any) =>
      `${
        d.webhook_id === picky.json.webhook.id ? "picky" : d.webhook_id === all.json.webhook.id ? "all" : "?"
      }:${d.event_type}`
    ).sort()
    expect(pairs).toEqual(["all:balance.low", "all:job.completed", "picky:job.completed"])
    expect(low.id).not.toBe(job.id)
  })

  it("writes nothing when the change that emits the event is rolled back", async () => {
    const org = await ownerOrg()
    await org.api.createWebhook({ url: world.receiver.url })
    const result = await world.emitter.emitAndRollBack(org.orgId, lowBalance)
    expect(result._tag).toBe("Left")
    expect(await world.db.query(`SELECT 1 FROM events WHERE org_id = $1`, [org.orgId])).toEqual([])
    expect(await world.db.query(`SELECT 1 FROM webhook_deliveries WHERE org_id = $1`, [org.orgId])).toEqual([])
    const owner = org.owner.email
    expect(await world.db.query(`SELECT 1 FROM mail_outbox WHERE to_address = $1`, [owner])).toEqual([])
  })

  it("test sends webhook.test to that endpoint at once and answers the delivery's outcome", async () => {
    const org = await ownerOrg()
    const path = `/test-${org.orgId}`
    const made = await org.api.createWebhook({
      url: world.receiver.url.replace("/hook", path),
      events: ["balance.low"]
    })
    const other = await org.api.createWebhook({ url: world.receiver.url.replace("/hook", `/other-${org.orgId}`) })
    const answer = await org.api.testWebhook(made.json.webhook.id)
    expect(answer.status).toBe(200)
    expect(answer.json).toMatchObject({
      webhook_id: made.json.webhook.id,
      event_type: "webhook.test",
      status: "delivered",
      attempts: 1,
      last_status_code: 200,
      last_error: null
    })
    const got = world.receiver.received.filter((r) => r.path === path)
    expect(got).toHaveLength(1)
    expect(JSON.parse(got[0]!.body)).toMatchObject({ type: "webhook.test", data: { message: expect.any(String) } })
    expect(
      independentlyVerify(made.json.webhook.secret, got[0]!.headers["service-signature"] as string, got[0]!.body).valid
    ).toBe(true)
    // Only the tested endpoint gets it; the event is listed.
    expect(world.receiver.received.some((r) => r.path === `/other-${org.orgId}`)).toBe(false)
    expect(other.status).toBe(201)
    expect((await org.api.events("?type=webhook.test")).json.events).toHaveLength(1)
  })
})

describe("lists", () => {
  it("serves the webhook event schema at /schemas/webhook-event.json (the document events are checked against)", async () => {
    const served = await request(`${world.server.url}/schemas/webhook-event.json`)
    expect(served.status).toBe(200)
    expect(served.json).toEqual(JSON.parse(JSON.stringify(webhookEventJsonSchema())))
  })

  it("lists events newest first with type filter, limit and starting_after, with or without endpoints", async () => {
    const org = await ownerOrg()
    const emitted = []
    for (let i = 0; i < 5; i++) {
      emitted.push(
        await world.emitter.emit(org.orgId, {
          type: "balance.low",
          data: { balance_credits: String(1000 + i), balance_usd: `1.00${i}` }
        })
      )
      emitted.push(
        await world.emitter.emit(org.orgId, {
          type: "tool.paused",
          data: { tool_id: `t${i}`, tool_name: `Tool ${i}`, reason: "maintenance" }
        })
      )
    }
    const all = await org.api.events()
    expect(all.status).toBe(200)
    expect(all.json.events.map((e: any) => e.id)).toEqual(emitted.map((e) => e.id).reverse())
    expect(all.json.has_more).toBe(false)
    const page1 = await org.api.events("?type=balance.low&limit=2")
    expect(page1.json.events.map((e: any) => e.data.balance_credits)).toEqual(["1004", "1003"])
    expect(page1.json.has_more).toBe(true)
    const page2 = await org.api.events(`?type=balance.low&limit=2&starting_after=${page1.json.events[1].id}`)
    expect(page2.json.events.map((e: any) => e.data.balance_credits)).toEqual(["1002", "1001"])
    const page3 = await org.api.events(`?type=balance.low&limit=2&starting_after=${page2.json.events[1].id}`)
    expect(page3.json).toEqual({
      events: [expect.objectContaining({ data: { balance_credits: "1000", balance_usd: "1.000" } })],
      has_more: false
    })
    for (
      const query of [
        "?limit=0",
        "?limit=201",
        "?limit=abc",
        "?type=nope",
        "?starting_after=nope",
        `?starting_after=${(await ownerOrg()).orgId}`
      ]
    ) {
      const bad = await org.api.events(query)
      expect(bad.status, query).toBe(400)
      expect(bad.json.error.code, query).toBe("invalid_input")
    }
    expect((await org.api.events("?limit=200")).status).toBe(200)
    // Another org sees none of them.
    const other = await ownerOrg()
    expect((await other.api.events()).json.events).toEqual([])
  })

  it("lists deliveries newest first with status, attempts, last code and error, and the next try", async () => {
    const org = await ownerOrg()
    const made = await org.api.createWebhook({ url: world.receiver.url })
    for (let i = 0; i < 3; i++) await org.api.testWebhook(made.json.webhook.id)
    const page = await org.api.deliveries("?limit=2")
    expect(page.json.deliveries).toHaveLength(2)
    expect(page.json.has_more).toBe(true)
    const rest = await org.api.deliveries(`?limit=2&starting_after=${page.json.deliveries[1].id}`)
    expect(rest.json.deliveries).toHaveLength(1)
    expect(rest.json.has_more).toBe(false)
    const ids = [...page.json.deliveries, ...rest.json.deliveries].map((d: any) => d.id)
    expect(new Set(ids).size).toBe(3)
    const filtered = await org.api.deliveries(`?status=delivered&webhook_id=${made.json.webhook.id}`)
    expect(filtered.json.deliveries).toHaveLength(3)
    expect((await org.api.deliveries("?status=failed")).json.deliveries).toHaveLength(0)
  })
})

describe("notification settings", () => {
  it("sets low_balance_usd (owner only), stored exactly as credits; default 5", async () => {
    const org = await ownerOrg()
    expect((await org.api.notifications()).json).toEqual({
      notifications: { low_balance_usd: "5.000", low_balance_credits: "5000" }
    })
    const set = await org.api.setNotifications({ low_balance_usd: 12.5 })
    expect(set.status).toBe(200)
    expect(set.json).toEqual({ notifications: { low_balance_usd: "12.500", low_balance_credits: "12500" } })
    expect(
      (await world.db.query(`SELECT low_balance_credits FROM orgs WHERE id = $1`, [org.orgId]))[0].low_balance_credits
    ).toBe("12500")
    expect((await org.api.setNotifications({ low_balance_usd: "0.001" })).json.notifications.low_balance_credits).toBe(
      "1"
    )
    expect((await org.api.setNotifications({})).json.notifications.low_balance_usd).toBe("5.000")
    for (const bad of [-1, 1.0001, "abc", "1e3", null]) {
      const answer = await org.api.setNotifications({ low_balance_usd: bad })
      expect(answer.status, String(bad)).toBe(400)
      expect(answer.json.error.code).toBe("invalid_input")
    }
  })
})

describe("webhook replay's route", () => {
  /**
   * The replay route's contract: who may replay, the request's shape and its errors, and the
   * per-org rate limit. What a replay resends (same ids and bodies, tries and window counted
   * again) is proved on the services in deliveryRules.test.ts.
   */

  const endpointOf = async () => {
    const org = await seedOrg(world.db)
    const api = orgApi(world.server.url, org.orgId, org.owner.sessionToken)
    const path = `/replay-${org.orgId}`
    const made = await api.createWebhook({ url: world.receiver.url.replace("/hook", path) })
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
})

describe("Standard Webhooks and secret rotation", () => {
  /**
   * Deliveries verified by the Standard Webhooks library (`standardwebhooks`) beside the spec's
   * own Service-Signature, and a secret rotation: both secrets sign for 24 hours, then only the new.
   */

  const headersOf = (got: { readonly headers: Record<string, unknown> }) =>
    Object.fromEntries(Object.entries(got.headers).map(([name, value]) => [name, String(value)]))

  /** Sends a test delivery to the endpoint and answers what the receiver got. */
  const delivered = async (api: ReturnType<typeof orgApi>, webhookId: string, path: string) => {
    const before = world.receiver.received.filter((r) => r.path === path).length
    expect((await api.testWebhook(webhookId)).status).toBe(200)
    return eventually(() => world.receiver.received.filter((r) => r.path === path)[before])
  }

  /** Whether a Standard Webhooks receiver with `secret` accepts the delivery (its time checked against now). */
  const standardAccepts = (
    secret: string,
    got: { readonly body: string; readonly headers: Record<string, unknown> }
  ) => {
    try {
      new Webhook(secret).verify(got.body, headersOf(got))
      return true
    } catch {
      return false
    }
  }

  const specAccepts = (secret: string, got: { readonly body: string; readonly headers: Record<string, unknown> }) => {
    try {
      verifyWebhook({
        rawBody: got.body,
        signature: String(got.headers["service-signature"]),
        secret,
        now: clock.now()
      })
      return true
    } catch {
      return false
    }
  }

  describe("Standard Webhooks", () => {
    it("signs as the Standard Webhooks specification's example", () => {
      expect(
        standardSignatureHeader(
          ["whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"],
          "msg_p5jXN8AQM9LWM0D4loKWxJek",
          1614265330,
          "{\"test\": 2432232314}"
        )
      ).toBe("v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE=")
    })

    it("a delivery verifies with the standardwebhooks library and with the spec's signature, under the same event id", async () => {
      const org = await seedOrg(world.db)
      const api = orgApi(world.server.url, org.orgId, org.owner.sessionToken)
      const path = `/std-${org.orgId}`
      const made = await api.createWebhook({ url: world.receiver.url.replace("/hook", path) })
      const secret: string = made.json.webhook.secret
      const got = await delivered(api, made.json.webhook.id, path)
      const event = new Webhook(secret).verify(got.body, headersOf(got)) as { id: string; type: string }
      expect(event.type).toBe("webhook.test")
      expect(got.headers["webhook-id"]).toBe(event.id)
      expect(got.headers["service-event-id"]).toBe(event.id)
      expect(got.headers["webhook-signature"]).toMatch(/^v1,[A-Za-z0-9+/]{43}=$/)
      expect(specAccepts(secret, got)).toBe(true)
      expect(standardAccepts(secret.slice(0, -1) + (secret.endsWith("A") ? "B" : "A"), got)).toBe(false)
      expect(standardAccepts(secret, { ...got, body: got.body.replace("webhook.test", "webhook.tesT") })).toBe(false)
    })

    it("a rotated secret signs beside the previous one for 24 hours, then alone", async () => {
      const org = await seedOrg(world.db)
      const api = orgApi(world.server.url, org.orgId, org.owner.sessionToken)
      const path = `/rotate-${org.orgId}`
      const made = await api.createWebhook({ url: world.receiver.url.replace("/hook", path) })
      const old: string = made.json.webhook.secret
      const id: string = made.json.webhook.id

      const rotated = await api.rotateSecret(id)
      expect(rotated.status).toBe(200)
      const fresh: string = rotated.json.webhook.secret
      expect(fresh).toMatch(/^whsec_[0-9A-Za-z]{44}$/)
      expect(fresh).not.toBe(old)
      const until = Date.parse(rotated.json.webhook.previous_secret_expires_at)
      expect(until - clock.now()).toBeGreaterThan(23.9 * 3600_000)
      expect(until - clock.now()).toBeLessThanOrEqual(24 * 3600_000)
      expect(rotated.json.webhook.secret_prefix).toBe(fresh.slice(0, 12))
      expect((await api.listWebhooks()).json.webhooks[0].previous_secret_expires_at).toBe(
        rotated.json.webhook.previous_secret_expires_at
      )

      const during = await delivered(api, id, path)
      expect(String(during.headers["webhook-signature"]).split(" ")).toHaveLength(2)
      expect(String(during.headers["service-signature"])).toMatch(/^t=\d+,v1=[0-9a-f]{64},v1=[0-9a-f]{64}$/)
      for (const secret of [fresh, old]) {
        expect(standardAccepts(secret, during)).toBe(true)
        expect(specAccepts(secret, during)).toBe(true)
      }

      // Past the overlap only the new secret signs. (The library checks the time against the
      // real clock, so the service's shifted time is carried back into the check.)
      clock.advance("24 hours")
      clock.advance("1 minute")
      const after = await delivered(api, id, path)
      expect(String(after.headers["webhook-signature"]).split(" ")).toHaveLength(1)
      const shiftedBack = {
        ...after,
        headers: { ...after.headers, "webhook-timestamp": String(Math.floor(Date.now() / 1000)) }
      }
      expect(specAccepts(fresh, after)).toBe(true)
      expect(specAccepts(old, after)).toBe(false)
      // The timestamp is signed: the library refuses a changed one even with the right secret...
      expect(standardAccepts(fresh, shiftedBack)).toBe(false)
      // ...so check the signature itself as the library computes it, at the delivery's own time.
      const signedAt = Number(after.headers["webhook-timestamp"])
      const { body } = after
      expect(new Webhook(fresh).sign(String(after.headers["webhook-id"]), new Date(signedAt * 1000), body))
        .toBe(after.headers["webhook-signature"])
      expect(new Webhook(old).sign(String(after.headers["webhook-id"]), new Date(signedAt * 1000), body))
        .not.toBe(after.headers["webhook-signature"])
    })

    it("only owners rotate; an unknown endpoint is not found", async () => {
      const org = await seedOrg(world.db)
      const api = orgApi(world.server.url, org.orgId, org.owner.sessionToken)
      expect((await api.rotateSecret("00000000-0000-4000-8000-000000000000")).status).toBe(404)
      expect((await api.rotateSecret("not-a-uuid")).status).toBe(404)
      const made = await api.createWebhook({ url: world.receiver.url })
      const member = await seedUser(world.db)
      await addMember(world.db, org.orgId, member.userId, "member")
      const refused = await orgApi(world.server.url, org.orgId, member.sessionToken).rotateSecret(made.json.webhook.id)
      expect(refused.status).toBe(403)
      expect(refused.json.error.code).toBe("forbidden")
    })
  })
})
