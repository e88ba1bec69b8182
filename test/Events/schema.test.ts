import { SqlClient } from "@effect/sql"
import { expect, layer } from "@effect/vitest"
import Ajv from "ajv"
import addFormats from "ajv-formats"
import { Effect, Exit, Layer, TestClock } from "effect"
import { type EventInput, eventTypeNames, webhookEventJsonSchema } from "../../src/Domain/Events.js"
import { Events } from "../../src/Services/Events/Events.js"
import { WebhookDelivery } from "../../src/Services/Webhooks/Delivery.js"
import { Webhooks } from "../../src/Services/Webhooks/Webhooks.js"
import { actorOf, seedOrg } from "../support/fixtures.js"
import { Receiver, serviceTier, SuiteDatabase } from "../support/testLayers.js"

/**
 * The published JSON Schema and the events the service actually sends cannot drift: every
 * type is emitted through the event store, delivered, and validated against the schema the
 * service serves (webhooks.test.ts proves the route serves this very document); data that
 * breaks its type's schema is refused at emit. On the services, without HTTP.
 */
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

const emit = (orgId: string, event: EventInput) =>
  Effect.flatMap(
    SqlClient.SqlClient,
    (sql) => Effect.flatMap(Events, (events) => events.emit(orgId, event).pipe(sql.withTransaction))
  )

/** The delivery worker's round: claims what is due and tries each. */
const round = Effect.gen(function*() {
  const delivery = yield* WebhookDelivery
  yield* Effect.forEach(yield* delivery.claim(64), delivery.attempt, { concurrency: "unbounded", discard: true })
})

layer(
  serviceTier(
    "events_schema",
    Layer.mergeAll(Webhooks.Default, WebhookDelivery.Default).pipe(Layer.provideMerge(Events.Default))
  ).pipe(Layer.provideMerge(Receiver.Test))
)("event schema", (it) => {
  it.effect("validates every delivered event of every type against the schema served at /schemas/webhook-event.json", () =>
    Effect.gen(function*() {
      // The clock at the real time (the template's rows were written then).
      yield* TestClock.setTime(Date.now())
      const ajv = new Ajv.default({ strict: false })
      addFormats.default(ajv)
      const validate = ajv.compile(webhookEventJsonSchema())
      expect(samples.map((s) => s.type)).toEqual([...eventTypeNames])

      const db = yield* SuiteDatabase
      const receiver = yield* Receiver
      const webhooks = yield* Webhooks
      const org = yield* Effect.promise(() => seedOrg(db))
      const actor = actorOf(org)
      const made = yield* webhooks.create(actor, { url: receiver.url })
      for (const sample of samples.filter((s) => s.type !== "webhook.test")) yield* emit(org.orgId, sample)
      yield* webhooks.sendTest(actor, made.webhook.id)
      yield* round
      expect(receiver.received).toHaveLength(samples.length)
      const seen = new Set<string>()
      for (const delivery of receiver.received) {
        const envelope = JSON.parse(delivery.body)
        expect(validate(envelope), `${envelope.type}: ${JSON.stringify(validate.errors)}`).toBe(true)
        seen.add(envelope.type)
      }
      expect([...seen].sort()).toEqual([...eventTypeNames].sort())
      // So does every event the events list answers (GET /events), as it goes on the wire.
      const listed = yield* (yield* Events).list(org.orgId, { limit: 100 })
      expect(listed.events).toHaveLength(samples.length)
      for (const event of JSON.parse(JSON.stringify(listed.events))) expect(validate(event), event.type).toBe(true)
      // And the schema refuses what the service must never send.
      expect(
        validate({
          ...JSON.parse(receiver.received[0]!.body),
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
    }))

  it.effect("refuses at emit data that does not match its type (nothing is written)", () =>
    Effect.gen(function*() {
      const db = yield* SuiteDatabase
      const org = yield* Effect.promise(() => seedOrg(db))
      const bad = {
        type: "job.completed",
        data: { job_id: "j", status: "done", receipt_id: "r", item_count: "30", passed: 1, expired: 0 }
      }
      expect(Exit.isFailure(yield* Effect.exit(emit(org.orgId, bad as unknown as EventInput)))).toBe(true)
      expect(yield* Effect.promise(() => db.query(`SELECT 1 FROM events WHERE org_id = $1`, [org.orgId]))).toEqual([])
    }))
})
