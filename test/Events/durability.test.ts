import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { createTestDatabase, type TestDatabase } from "../support/database.js"
import { type EventEmitter, eventEmitter } from "../support/eventEmitter.js"
import { seedOrg } from "../support/fixtures.js"
import { startReceiver } from "../support/receiver.js"
import { startServer, type TestServer } from "../support/server.js"
import { makeShiftableClock, type ShiftableClock } from "../support/shiftableClock.js"
import { workersSettled } from "../support/workerRounds.js"
import { eventually } from "../support/world.js"
import { orgApi } from "../Webhooks/support.js"

/** Deliveries survive restarts, and replicas sharing the database never send a try twice. */
let db: TestDatabase
let emitter: EventEmitter
let clock: ShiftableClock
const servers: Array<TestServer> = []

const start = async (env: Record<string, string> = {}) => {
  const server = await startServer({ DATABASE_URL: db.url, ...env }, clock.layer)
  servers.push(server)
  return server
}

beforeAll(async () => {
  db = await createTestDatabase("events_durability")
  clock = makeShiftableClock()
  emitter = eventEmitter(db, {}, clock.layer)
})

afterAll(async () => {
  await emitter?.close()
  for (const server of servers) await server.close().catch(() => undefined)
  await db?.drop()
})

const lowBalance = { type: "balance.low", data: { balance_credits: "10", balance_usd: "0.010" } } as const

const deliveryRow = async (eventId: string) =>
  (await db.query(`SELECT status, attempts, next_attempt_at, lease_until FROM webhook_deliveries WHERE event_id = $1`, [
    eventId
  ]))[0]

describe("durability", () => {
  it("loses no pending retry across a restart", async () => {
    const receiver = await startReceiver({ kind: "fail", status: 500 })
    try {
      const first = await start()
      const org = await seedOrg(db)
      const api = orgApi(first.url, org.orgId, org.owner.sessionToken)
      await api.createWebhook({ url: receiver.url })
      const events = await Promise.all([1, 2, 3].map(() => emitter.emit(org.orgId, lowBalance)))
      await eventually(async () => {
        const rows = await Promise.all(events.map((e) => deliveryRow(e.id)))
        return rows.every((r) => r.attempts === 1 && r.status === "pending") ? true : undefined
      })
      await first.close()

      receiver.setMode({ kind: "ok" })
      const second = await start()
      clock.advance(61_000)
      await eventually(async () => {
        const rows = await Promise.all(events.map((e) => deliveryRow(e.id)))
        return rows.every((r) => r.status === "delivered") ? true : undefined
      })
      for (const event of events) {
        expect(await deliveryRow(event.id)).toMatchObject({ status: "delivered", attempts: 2 })
        expect(receiver.received.filter((r) => r.headers["service-event-id"] === event.id)).toHaveLength(2)
      }
      await second.close()
    } finally {
      await receiver.close()
    }
  })

  it("takes back a try cut off by a crash once its lease ends", async () => {
    const receiver = await startReceiver({ kind: "silent" })
    try {
      const first = await start()
      const org = await seedOrg(db)
      await orgApi(first.url, org.orgId, org.owner.sessionToken).createWebhook({ url: receiver.url })
      const event = await emitter.emit(org.orgId, lowBalance)
      // The try is in flight (the receiver holds it) when the process goes away.
      await eventually(() => (receiver.received.length > 0 ? true : undefined))
      await first.close()
      const leased = await deliveryRow(event.id)
      expect(leased).toMatchObject({ status: "pending", attempts: 0 })
      expect(leased.lease_until).not.toBeNull()

      receiver.setMode({ kind: "ok" })
      const second = await start()
      // Still leased: nothing happens until the lease (60 s) runs out.
      await workersSettled(["webhook worker"])
      expect(receiver.received).toHaveLength(1)
      clock.advance(61_000)
      await eventually(async () => ((await deliveryRow(event.id)).status === "delivered" ? true : undefined))
      expect(receiver.received.map((r) => r.headers["service-event-id"])).toEqual([event.id, event.id])
      await second.close()
    } finally {
      await receiver.close()
    }
  })

  it("two replicas on one database send each try exactly once", async () => {
    const receiver = await startReceiver({ kind: "ok" })
    try {
      const [a, b] = await Promise.all([start(), start()])
      const org = await seedOrg(db)
      await orgApi(a!.url, org.orgId, org.owner.sessionToken).createWebhook({ url: receiver.url })
      await orgApi(b!.url, org.orgId, org.owner.sessionToken).createWebhook({
        url: receiver.url.replace("/hook", "/second")
      })
      const events = []
      for (let i = 0; i < 60; i++) events.push(await emitter.emit(org.orgId, lowBalance))
      await eventually(async () => {
        const [row] = await db.query(
          `SELECT count(*)::int AS n FROM webhook_deliveries WHERE org_id = $1 AND status = 'delivered'`,
          [org.orgId]
        )
        return row.n === 120 ? true : undefined
      })
      // Both replicas (one count): enough rounds for each to have ended one.
      await workersSettled(["webhook worker"], { rounds: 4 })
      const seen = new Map<string, number>()
      for (const r of receiver.received) {
        const key = `${r.path}:${r.headers["service-event-id"]}`
        seen.set(key, (seen.get(key) ?? 0) + 1)
      }
      expect(seen.size).toBe(120)
      expect([...seen.values()].every((n) => n === 1)).toBe(true)
      const attempts = await db.query(`SELECT DISTINCT attempts FROM webhook_deliveries WHERE org_id = $1`, [org.orgId])
      expect(attempts).toEqual([{ attempts: 1 }])
      await a!.close()
      await b!.close()
    } finally {
      await receiver.close()
    }
  })

  it("lets one unanswering endpoint hold at most half of the worker slots", async () => {
    const silent = await startReceiver({ kind: "silent" })
    const healthy = await startReceiver({ kind: "ok" })
    try {
      const setup = await start()
      const org = await seedOrg(db)
      const api = orgApi(setup.url, org.orgId, org.owner.sessionToken)
      await api.createWebhook({ url: silent.url })
      await api.createWebhook({ url: healthy.url, events: ["job.completed"] })
      await setup.close()
      // A backlog whose 40 oldest rows all go to the silent endpoint (more than one claim
      // looks at), then a replica with 4 slots starts on it.
      for (let i = 0; i < 40; i++) await emitter.emit(org.orgId, lowBalance)
      for (let i = 0; i < 4; i++) {
        await emitter.emit(org.orgId, {
          type: "job.completed",
          data: { job_id: `j${i}`, status: "done", receipt_id: `r${i}`, item_count: 30, passed: 30, expired: 0 }
        })
      }
      const server = await start({ WEBHOOK_WORKER_CONCURRENCY: "4" })
      // Every delivery to the healthy endpoint arrives while the silent one still holds its
      // first tries (each waits 10 s for an answer), and it never had more than 2 at once.
      await eventually(() => (healthy.received.length === 4 ? true : undefined))
      expect(silent.received.length).toBeLessThanOrEqual(2)
      expect(silent.received.length).toBeGreaterThanOrEqual(1)
      await server.close()
    } finally {
      await silent.close()
      await healthy.close()
    }
  })
})
