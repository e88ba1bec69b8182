import { SqlClient } from "@effect/sql"
import { expect, layer } from "@effect/vitest"
import { Effect, Layer } from "effect"
import type { EventInput } from "../../src/Domain/Events.js"
import { Events } from "../../src/Services/Events/Events.js"
import { WebhookWorkerLive } from "../../src/Services/Webhooks/Delivery.js"
import { Webhooks } from "../../src/Services/Webhooks/Webhooks.js"
import { eventually } from "../support/eventually.js"
import { actorOf, seedOrg } from "../support/fixtures.js"
import { type ReceiverMode, startReceiver } from "../support/receiver.js"
import { makeShiftableClock } from "../support/shiftableClock.js"
import { inShiftedTime, serviceTier, startWorkers, SuiteDatabase } from "../support/testLayers.js"
import { workersSettled } from "../support/workerRounds.js"

/**
 * Deliveries survive restarts, and replicas sharing the database never send a try twice: the
 * webhook worker as the server runs it (`WebhookWorkerLive`, with services of its own), started
 * and stopped as a replica of the service is, without HTTP. Time is a clock the test moves
 * forward (the real time plus an offset, sleeps real), for the workers and the events alike.
 */
const clock = makeShiftableClock()
const shifted = inShiftedTime(clock)

const lowBalance: EventInput = { type: "balance.low", data: { balance_credits: "10", balance_usd: "0.010" } }

/** A replica of the service's webhook worker; `env` over the suite's configuration. */
const replica = (env: Record<string, string> = {}) => startWorkers(WebhookWorkerLive, env)

/** A receiver of the test's own, closed with the test. */
const scopedReceiver = (mode: ReceiverMode) =>
  Effect.acquireRelease(Effect.promise(() => startReceiver(mode)), (r) => Effect.promise(() => r.close()))

/** An org with one owner, and its credential. */
const newOrg = Effect.gen(function*() {
  const db = yield* SuiteDatabase
  const org = yield* Effect.promise(() => seedOrg(db))
  return { org, actor: actorOf(org) }
})

const emit = (orgId: string, event: EventInput) =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    return yield* (yield* Events).emit(orgId, event).pipe(sql.withTransaction)
  })

const deliveryRow = (eventId: string) =>
  Effect.gen(function*() {
    const db = yield* SuiteDatabase
    const [row] = yield* Effect.promise(() =>
      db.query(`SELECT status, attempts, next_attempt_at, lease_until FROM webhook_deliveries WHERE event_id = $1`, [
        eventId
      ])
    )
    return row
  })

/** Polls (in real time) until `check` holds of the rows of `eventIds`. */
const rowsUntil = (eventIds: ReadonlyArray<string>, check: (row: any) => boolean, what: string) =>
  Effect.gen(function*() {
    const db = yield* SuiteDatabase
    yield* Effect.promise(() =>
      eventually(async () => {
        const rows = await db.query(
          `SELECT status, attempts FROM webhook_deliveries WHERE event_id = ANY($1::uuid[])`,
          [
            eventIds
          ]
        )
        return rows.length === eventIds.length && rows.every(check)
      }, { what })
    )
  })

layer(serviceTier("events_durability", Webhooks.Default.pipe(Layer.provideMerge(Events.Default))))((it) => {
  it.scoped("loses no pending retry across a restart", () =>
    shifted(Effect.gen(function*() {
      const receiver = yield* scopedReceiver({ kind: "fail", status: 500 })
      const first = yield* replica()
      const { actor, org } = yield* newOrg
      yield* (yield* Webhooks).create(actor, { url: receiver.url })
      const events = yield* Effect.forEach([1, 2, 3], () => emit(org.orgId, lowBalance), { concurrency: 3 })
      const ids = events.map((e) => e.id)
      yield* rowsUntil(ids, (r) => r.attempts === 1 && r.status === "pending", "the first tries, failed")
      yield* first.stop

      receiver.setMode({ kind: "ok" })
      yield* replica()
      clock.advance(61_000)
      yield* rowsUntil(ids, (r) => r.status === "delivered", "the retries, delivered")
      for (const event of events) {
        expect(yield* deliveryRow(event.id)).toMatchObject({ status: "delivered", attempts: 2 })
        expect(receiver.received.filter((r) => r.headers["service-event-id"] === event.id)).toHaveLength(2)
      }
    })))

  it.scoped("takes back a try cut off by a crash once its lease ends", () =>
    shifted(Effect.gen(function*() {
      const receiver = yield* scopedReceiver({ kind: "silent" })
      const first = yield* replica()
      const { actor, org } = yield* newOrg
      yield* (yield* Webhooks).create(actor, { url: receiver.url })
      const event = yield* emit(org.orgId, lowBalance)
      // The try is in flight (the receiver holds it) when the replica goes away.
      yield* Effect.promise(() => eventually(() => receiver.received.length > 0, { what: "the first try" }))
      yield* first.stop
      const leased = yield* deliveryRow(event.id)
      expect(leased).toMatchObject({ status: "pending", attempts: 0 })
      expect(leased.lease_until).not.toBeNull()

      receiver.setMode({ kind: "ok" })
      yield* replica()
      // Still leased: nothing happens until the lease (60 s) runs out.
      yield* Effect.promise(() => workersSettled(["webhook worker"]))
      expect(receiver.received).toHaveLength(1)
      clock.advance(61_000)
      yield* rowsUntil([event.id], (r) => r.status === "delivered", "the try taken back")
      expect(receiver.received.map((r) => r.headers["service-event-id"])).toEqual([event.id, event.id])
    })))

  it.scoped("two replicas on one database send each try exactly once", () =>
    shifted(Effect.gen(function*() {
      const db = yield* SuiteDatabase
      const webhooks = yield* Webhooks
      const receiver = yield* scopedReceiver({ kind: "ok" })
      yield* Effect.all([replica(), replica()], { concurrency: 2 })
      const { actor, org } = yield* newOrg
      yield* webhooks.create(actor, { url: receiver.url })
      yield* webhooks.create(actor, { url: receiver.url.replace("/hook", "/second") })
      for (let i = 0; i < 60; i++) yield* emit(org.orgId, lowBalance)
      yield* Effect.promise(() =>
        eventually(async () => {
          const [row] = await db.query(
            `SELECT count(*)::int AS n FROM webhook_deliveries WHERE org_id = $1 AND status = 'delivered'`,
            [org.orgId]
          )
          return row.n === 120
        }, { what: "120 deliveries" })
      )
      // Both replicas (one count): enough rounds for each to have ended one.
      yield* Effect.promise(() => workersSettled(["webhook worker"], { rounds: 4 }))
      const seen = new Map<string, number>()
      for (const r of receiver.received) {
        const key = `${r.path}:${r.headers["service-event-id"]}`
        seen.set(key, (seen.get(key) ?? 0) + 1)
      }
      expect(seen.size).toBe(120)
      expect([...seen.values()].every((n) => n === 1)).toBe(true)
      const attempts = yield* Effect.promise(() =>
        db.query(`SELECT DISTINCT attempts FROM webhook_deliveries WHERE org_id = $1`, [org.orgId])
      )
      expect(attempts).toEqual([{ attempts: 1 }])
    })))

  it.scoped("lets one unanswering endpoint hold at most half of the worker slots", () =>
    shifted(Effect.gen(function*() {
      const webhooks = yield* Webhooks
      const silent = yield* scopedReceiver({ kind: "silent" })
      const healthy = yield* scopedReceiver({ kind: "ok" })
      const { actor, org } = yield* newOrg
      yield* webhooks.create(actor, { url: silent.url })
      yield* webhooks.create(actor, { url: healthy.url, events: ["job.completed"] })
      // A backlog whose 40 oldest rows all go to the silent endpoint (more than one claim
      // looks at), then a replica with 4 slots starts on it.
      for (let i = 0; i < 40; i++) yield* emit(org.orgId, lowBalance)
      for (let i = 0; i < 4; i++) {
        yield* emit(org.orgId, {
          type: "job.completed",
          data: { job_id: `j${i}`, status: "done", receipt_id: `r${i}`, item_count: 30, passed: 30, expired: 0 }
        })
      }
      yield* replica({ WEBHOOK_WORKER_CONCURRENCY: "4" })
      // Every delivery to the healthy endpoint arrives while the silent one still holds its
      // first tries (each waits 10 s for an answer), and it never had more than 2 at once.
      yield* Effect.promise(() => eventually(() => healthy.received.length === 4, { what: "the healthy deliveries" }))
      expect(silent.received.length).toBeLessThanOrEqual(2)
      expect(silent.received.length).toBeGreaterThanOrEqual(1)
    })))
})
