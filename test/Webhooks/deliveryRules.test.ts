import { SqlClient } from "@effect/sql"
import { expect, layer } from "@effect/vitest"
import { Clock, Effect, Fiber, Layer, TestClock } from "effect"
import { Webhook } from "standardwebhooks"
import type { EventInput } from "../../src/Domain/Events.js"
import { EventId, type WebhookDeliveryId } from "../../src/Domain/Ids.js"
import { Events } from "../../src/Services/Events/Events.js"
import { WebhookDelivery } from "../../src/Services/Webhooks/Delivery.js"
import { Webhooks } from "../../src/Services/Webhooks/Webhooks.js"
import { actorOf, seedOrg } from "../support/fixtures.js"
import { closedPort, type ReceiverMode, startReceiver } from "../support/receiver.js"
import { Receiver, serviceTier, SuiteDatabase } from "../support/testLayers.js"
import { eventually } from "../support/world.js"
import { independentlyVerify } from "./support.js"

/**
 * Webhook delivery rules on the services, over the suite's database and without HTTP: the
 * retry schedule, the final failed state and the 24-hour cut-off, how a try's answer
 * (2xx, 5xx, redirect, refused connection, no answer in 10 s) is recorded, and what a replay
 * resends (same ids and bodies, tries and window counted again). Time is the
 * TestClock: a test moves it to the next try and runs the worker's two steps itself
 * (claim the due deliveries, try each), so nothing waits for a worker's round.
 */
const MINUTE = 60_000
const lowBalance: EventInput = { type: "balance.low", data: { balance_credits: "10", balance_usd: "0.010" } }
const toolPaused: EventInput = {
  type: "tool.paused",
  data: { tool_id: "t1", tool_name: "Tool", reason: "maintenance" }
}

/** An org with one owner and an endpoint at `url`; the endpoint's secret is in its answer. */
const orgWithEndpoint = (url: string) =>
  Effect.gen(function*() {
    const db = yield* SuiteDatabase
    const org = yield* Effect.promise(() => seedOrg(db))
    const actor = actorOf(org)
    const made = yield* (yield* Webhooks).create(actor, { url })
    return { org, actor, endpoint: made.webhook }
  })

const emit = (orgId: string, event: EventInput) =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    return yield* (yield* Events).emit(orgId, event).pipe(sql.withTransaction)
  })

/** The worker's round, at the clock's time: claims what is due and tries each; answers the ids tried. */
const round = Effect.gen(function*() {
  const delivery = yield* WebhookDelivery
  const claimed = yield* delivery.claim(64)
  yield* Effect.forEach(claimed, delivery.attempt, { concurrency: "unbounded" })
  return claimed.map((row) => row.event_id)
})

/** The delivery of `eventId`, as its row stands. */
const deliveryOf = (eventId: string) =>
  Effect.gen(function*() {
    const db = yield* SuiteDatabase
    const [row] = yield* Effect.promise(() =>
      db.query<{ id: WebhookDeliveryId }>(`SELECT id FROM webhook_deliveries WHERE event_id = $1`, [eventId])
    )
    return yield* (yield* WebhookDelivery).find(row!.id)
  })

/** Moves the clock just past `at`. */
const moveTo = (at: Date) => TestClock.setTime(at.getTime() + 50)

/** A receiver of a test's own, closed with the test. */
const scopedReceiver = (mode: ReceiverMode) =>
  Effect.acquireRelease(Effect.promise(() => startReceiver(mode)), (r) => Effect.promise(() => r.close()))

/** The clock at the real time, where each test starts (the template's rows were written then). */
const startNow = TestClock.setTime(Date.now())

layer(
  serviceTier(
    "webhook_rules",
    Layer.mergeAll(Webhooks.Default, WebhookDelivery.Default).pipe(Layer.provideMerge(Events.Default))
  ).pipe(
    Layer.provideMerge(Receiver.Test)
  )
)((it) => {
  it.effect("retries after 1, 5, 15, 30, 60, 120, 240, 480 and 480 minutes, then marks the delivery failed", () =>
    Effect.gen(function*() {
      yield* startNow
      const receiver = yield* Receiver
      receiver.setMode({ kind: "fail", status: 500 })
      const path = `/schedule-${Date.now()}`
      const { endpoint, org } = yield* orgWithEndpoint(receiver.url.replace("/hook", path))
      const event = yield* emit(org.orgId, toolPaused)
      const waits: Array<number> = []
      for (let attempt = 1; attempt <= 10; attempt++) {
        expect(yield* round).toContain(event.id)
        const delivery = yield* deliveryOf(event.id)
        expect(delivery).toMatchObject({ attempts: attempt, last_status_code: 500, last_error: "Answered HTTP 500" })
        if (attempt < 10) {
          expect(delivery.status).toBe("pending")
          waits.push(Math.floor((delivery.next_attempt_at!.getTime() - delivery.last_attempt_at!.getTime()) / MINUTE))
          // Nothing is sent before the next try is due.
          yield* TestClock.setTime(delivery.next_attempt_at!.getTime() - 1_000)
          expect(yield* round).not.toContain(event.id)
          yield* moveTo(delivery.next_attempt_at!)
        } else {
          expect(delivery.status).toBe("failed")
          expect(delivery.next_attempt_at).toBeNull()
        }
      }
      expect(waits).toEqual([1, 5, 15, 30, 60, 120, 240, 480, 480])
      // Ten tries in all, the same event id and body every time, each freshly signed.
      const tries = receiver.received.filter((r) => r.path === path)
      expect(tries).toHaveLength(10)
      expect(new Set(tries.map((r) => r.headers["service-event-id"]))).toEqual(new Set([event.id]))
      expect(new Set(tries.map((r) => r.body)).size).toBe(1)
      const stamps = tries.map((r) =>
        independentlyVerify(endpoint.secret, r.headers["service-signature"] as string, r.body)
      )
      expect(stamps.every((s) => s.valid)).toBe(true)
      for (let i = 1; i < stamps.length; i++) expect(stamps[i]!.t).toBeGreaterThan(stamps[i - 1]!.t)
      // Moving further on sends nothing more.
      yield* TestClock.adjust("24 hours")
      expect(yield* round).not.toContain(event.id)
      expect(receiver.received.filter((r) => r.path === path)).toHaveLength(10)
    }))

  it.effect("fails a delivery when its next try would fall more than 24 hours after the event", () =>
    Effect.gen(function*() {
      yield* startNow
      const receiver = yield* Receiver
      receiver.setMode({ kind: "fail", status: 500 })
      const { org } = yield* orgWithEndpoint(receiver.url.replace("/hook", `/cutoff-${Date.now()}`))
      const event = yield* emit(org.orgId, lowBalance)
      yield* round
      expect((yield* deliveryOf(event.id)).status).toBe("pending")
      // The service was down for almost a day: the second try runs late, and a third would fall past 24 hours.
      yield* TestClock.adjust(23 * 60 * MINUTE + 57 * MINUTE)
      expect(yield* round).toContain(event.id)
      expect(yield* deliveryOf(event.id)).toMatchObject({
        attempts: 2,
        status: "failed",
        next_attempt_at: null,
        last_error: "Answered HTTP 500"
      })
    }))

  it.scoped("delivers on a later try once the receiver recovers, with the same event id", () =>
    Effect.gen(function*() {
      yield* startNow
      const recovering = yield* scopedReceiver({ kind: "fail", status: 502 })
      const { org } = yield* orgWithEndpoint(recovering.url)
      const event = yield* emit(org.orgId, lowBalance)
      yield* round
      const first = yield* deliveryOf(event.id)
      recovering.setMode({ kind: "ok", status: 204 })
      yield* moveTo(first.next_attempt_at!)
      yield* round
      expect(yield* deliveryOf(event.id)).toMatchObject({
        attempts: 2,
        status: "delivered",
        last_status_code: 204,
        last_error: null,
        next_attempt_at: null
      })
      expect(recovering.received.map((r) => r.headers["service-event-id"])).toEqual([event.id, event.id])
    }))

  it.scoped("test reports a 5xx, a redirect (never followed) and a refused connection as pending retries", () =>
    Effect.gen(function*() {
      yield* startNow
      const webhooks = yield* Webhooks
      const failing = yield* scopedReceiver({ kind: "fail", status: 503 })
      const redirecting = yield* scopedReceiver({ kind: "redirect", status: 302 })
      const { actor, endpoint: a } = yield* orgWithEndpoint(failing.url)
      const b = (yield* webhooks.create(actor, { url: redirecting.url })).webhook
      const c = (yield* webhooks.create(actor, { url: `http://127.0.0.1:${yield* Effect.promise(closedPort)}/hook` }))
        .webhook
      const five = yield* webhooks.sendTest(actor, a.id)
      expect(five).toMatchObject({
        status: "pending",
        attempts: 1,
        last_status_code: 503,
        last_error: "Answered HTTP 503"
      })
      expect(five.next_attempt_at!.getTime() - five.last_attempt_at!.getTime()).toBeGreaterThanOrEqual(MINUTE)
      expect(yield* webhooks.sendTest(actor, b.id)).toMatchObject({
        status: "pending",
        last_status_code: 302,
        last_error: "Redirect (302) not followed"
      })
      expect(redirecting.received).toHaveLength(1)
      expect(redirecting.redirectTargetHits).toHaveLength(0)
      expect(yield* webhooks.sendTest(actor, c.id)).toMatchObject({
        status: "pending",
        last_status_code: null,
        last_error: "Connection refused"
      })
    }))

  it.scoped("treats an answer slower than 10 seconds, or none at all, as a failed try", () =>
    Effect.gen(function*() {
      yield* startNow
      const webhooks = yield* Webhooks
      const slow = yield* scopedReceiver({ kind: "slow", delayMs: 12_000 })
      const silent = yield* scopedReceiver({ kind: "silent" })
      const { actor, endpoint: a } = yield* orgWithEndpoint(slow.url)
      const b = (yield* webhooks.create(actor, { url: silent.url })).webhook
      const tries = yield* Effect.fork(
        Effect.all([webhooks.sendTest(actor, a.id), webhooks.sendTest(actor, b.id)], { concurrency: 2 })
      )
      // Both receivers hold the request; then ten seconds pass on the service's clock.
      yield* Effect.promise(() =>
        eventually(() => slow.received.length === 1 && silent.received.length === 1, { what: "both tries sent" })
      )
      yield* TestClock.adjust("10 seconds")
      for (const answer of yield* Fiber.join(tries)) {
        expect(answer).toMatchObject({
          status: "pending",
          attempts: 1,
          last_status_code: null,
          last_error: "No answer within 10 seconds"
        })
      }
      expect(slow.received).toHaveLength(1)
      expect(silent.received).toHaveLength(1)
    }))

  it.effect("a replay resends one event with the same id and body, signed afresh", () =>
    Effect.gen(function*() {
      yield* startNow
      const receiver = yield* Receiver
      receiver.setMode({ kind: "ok" })
      const path = `/replay-one-${Date.now()}`
      const { actor, endpoint, org } = yield* orgWithEndpoint(receiver.url.replace("/hook", path))
      const arrivals = (eventId: string) =>
        receiver.received.filter((r) => r.path === path && r.headers["service-event-id"] === eventId)
      const event = yield* emit(org.orgId, lowBalance)
      yield* round
      expect((yield* deliveryOf(event.id)).status).toBe("delivered")

      const replayed = yield* (yield* Webhooks).replay(actor, endpoint.id, { event_id: EventId.make(event.id) })
      expect(replayed).toEqual({ replayed: 1, event_ids: [event.id] })
      expect(yield* round).toContain(event.id)
      const [first, again] = arrivals(event.id)
      expect(again!.body).toBe(first!.body)
      expect(again!.headers["webhook-id"]).toBe(event.id)
      expect(JSON.parse(again!.body).id).toBe(event.id)
      new Webhook(endpoint.secret).verify(
        again!.body,
        Object.fromEntries(Object.entries(again!.headers).map(([name, value]) => [name, String(value)]))
      )
      expect((yield* deliveryOf(event.id)).status).toBe("delivered")
    }))

  it.effect("a replay resends what failed since a time, or everything since then, each with a window of its own", () =>
    Effect.gen(function*() {
      yield* startNow
      const webhooks = yield* Webhooks
      const receiver = yield* Receiver
      receiver.setMode({ kind: "ok" })
      const path = `/replay-since-${Date.now()}`
      const { actor, endpoint, org } = yield* orgWithEndpoint(receiver.url.replace("/hook", path))
      const arrivals = (eventId: string) =>
        receiver.received.filter((r) => r.path === path && r.headers["service-event-id"] === eventId)
      const since = new Date((yield* Clock.currentTimeMillis) - 1000)
      const delivered = yield* emit(org.orgId, lowBalance)
      yield* round
      expect((yield* deliveryOf(delivered.id)).status).toBe("delivered")

      receiver.setMode({ kind: "fail" })
      const failing = yield* emit(org.orgId, lowBalance)
      yield* round
      expect(arrivals(failing.id)).toHaveLength(1)
      // Past the 24-hour window the next try is the last: the delivery fails.
      yield* TestClock.adjust("25 hours")
      yield* round
      expect((yield* deliveryOf(failing.id)).status).toBe("failed")
      expect(arrivals(failing.id)).toHaveLength(2)

      // Replayed while the receiver still refuses: the try counts from one again and the
      // delivery has a window of its own, so it waits for its next try instead of failing.
      expect(yield* webhooks.replay(actor, endpoint.id, { since, only_failed: true })).toEqual({
        replayed: 1,
        event_ids: [failing.id]
      })
      yield* round
      expect(arrivals(failing.id)).toHaveLength(3)
      const afterTry = yield* deliveryOf(failing.id)
      expect(afterTry).toMatchObject({ status: "pending", attempts: 1 })
      expect(afterTry.next_attempt_at!.getTime() - (yield* Clock.currentTimeMillis)).toBeGreaterThan(30_000)

      receiver.setMode({ kind: "ok" })
      expect((yield* webhooks.replay(actor, endpoint.id, { event_id: EventId.make(failing.id) })).event_ids).toEqual([
        failing.id
      ])
      yield* round
      expect((yield* deliveryOf(failing.id)).status).toBe("delivered")
      expect(arrivals(delivered.id)).toHaveLength(1)
      expect(new Set(arrivals(failing.id).map((r) => JSON.parse(r.body).id))).toEqual(new Set([failing.id]))

      const everything = yield* webhooks.replay(actor, endpoint.id, { since })
      expect(everything.replayed).toBe(2)
      expect([...everything.event_ids].sort()).toEqual([delivered.id, failing.id].sort())
      yield* round
      expect(arrivals(delivered.id)).toHaveLength(2)

      const later = new Date((yield* Clock.currentTimeMillis) + 60_000)
      expect(yield* webhooks.replay(actor, endpoint.id, { since: later })).toEqual({ replayed: 0, event_ids: [] })
    }))
})
