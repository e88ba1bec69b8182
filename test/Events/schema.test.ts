import Ajv from "ajv"
import addFormats from "ajv-formats"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { type EventInput, eventTypeNames } from "../../src/Domain/Events.js"
import { seedOrg } from "../support/fixtures.js"
import { request } from "../support/server.js"
import { eventually, startWorld, type World } from "../support/world.js"
import { orgApi } from "../Webhooks/support.js"

/**
 * The published JSON Schema and the events the service actually sends cannot drift: every
 * type is emitted through the event store, delivered, and validated against the schema the
 * service serves; data that breaks its type's schema is refused at emit.
 */
let world: World

beforeAll(async () => {
  world = await startWorld("events_schema", { emitter: true, receiver: true })
})

afterAll(() => world?.close())

const samples: ReadonlyArray<EventInput> = [
  { type: "balance.low", data: { balance_credits: "4200", balance_usd: "4.200" } },
  { type: "budget.80pct", data: { agent_id: "a", agent_name: "n", spent_credits: "40000", budget_credits: "50000" } },
  {
    type: "approval.requested",
    data: {
      approval_id: "x",
      agent_id: "a",
      tool_id: "t",
      item_count: 3,
      amount_credits: "120",
      amount_usd: "0.120",
      reason: "over_budget",
      expires_at: "2026-11-22T10:00:00.000Z"
    }
  },
  { type: "approval.decided", data: { approval_id: "x", agent_id: "a", status: "rejected", note: "too dear" } },
  {
    type: "job.completed",
    data: { job_id: "j", status: "done", receipt_id: "r", item_count: 30, passed: 28, expired: 2 }
  },
  { type: "tool.paused", data: { tool_id: "t", tool_name: "T", reason: "accuracy drop" } },
  {
    type: "dispute.decided",
    data: { dispute_id: "d", receipt_id: "r", item_index: 0, decision: "rejected", refunded_credits: "0", note: null }
  },
  {
    type: "price.changed",
    data: { tool_id: "t", tool_name: "T", old_credits: "10", new_credits: "12", valid_from: "2026-12-01T00:00:00.000Z" }
  },
  { type: "trial.expiring", data: { credits: "5000", expires_on: "2026-12-21" } },
  { type: "webhook.test", data: { message: "hello" } }
]

describe("event schema", () => {
  it("validates every delivered event of every type against /schemas/webhook-event.json", async () => {
    const { json: schema } = await request(`${world.server.url}/schemas/webhook-event.json`)
    const ajv = new Ajv.default({ strict: false })
    addFormats.default(ajv)
    const validate = ajv.compile(schema)
    expect(samples.map((s) => s.type)).toEqual([...eventTypeNames])

    const org = await seedOrg(world.db)
    const api = orgApi(world.server.url, org.orgId, org.owner.sessionToken)
    const made = await api.createWebhook({ url: world.receiver.url })
    for (const sample of samples.filter((s) => s.type !== "webhook.test")) await world.emitter.emit(org.orgId, sample)
    await api.testWebhook(made.json.webhook.id)
    await eventually(() => (world.receiver.received.length >= samples.length ? true : undefined))
    const seen = new Set<string>()
    for (const delivery of world.receiver.received) {
      const envelope = JSON.parse(delivery.body)
      expect(validate(envelope), `${envelope.type}: ${JSON.stringify(validate.errors)}`).toBe(true)
      seen.add(envelope.type)
    }
    expect([...seen].sort()).toEqual([...eventTypeNames].sort())
    // So does every event GET /events answers.
    const { json } = await api.events()
    expect(json.events).toHaveLength(samples.length)
    for (const event of json.events) expect(validate(event), event.type).toBe(true)
    // And the schema refuses what the service must never send.
    expect(
      validate({
        ...JSON.parse(world.receiver.received[0]!.body),
        data: { balance_credits: 4200, balance_usd: "4.200" }
      })
    ).toBe(false)
    expect(
      validate({
        id: "6f1c2a9e-1b2c-4d3e-8f40-1a2b3c4d5e6f",
        type: "balance.high",
        created_at: "2026-11-22T00:00:00.000Z",
        data: {}
      })
    ).toBe(false)
  })

  it("refuses at emit data that does not match its type (nothing is written)", async () => {
    const org = await seedOrg(world.db)
    const bad = {
      type: "job.completed",
      data: { job_id: "j", status: "done", receipt_id: "r", item_count: "30", passed: 1, expired: 0 }
    }
    await expect(world.emitter.emit(org.orgId, bad as unknown as EventInput)).rejects.toThrow()
    expect(await world.db.query(`SELECT 1 FROM events WHERE org_id = $1`, [org.orgId])).toEqual([])
  })
})
