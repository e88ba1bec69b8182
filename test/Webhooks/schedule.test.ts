import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { seedOrg } from "../support/fixtures.js"
import { startReceiver } from "../support/receiver.js"
import { makeShiftableClock, type ShiftableClock } from "../support/shiftableClock.js"
import { workersSettled } from "../support/workerRounds.js"
import { eventually, startWorld, type World } from "../support/world.js"
import { independentlyVerify, orgApi } from "./support.js"

/**
 * The retry schedule, the final failed state and the 24-hour cut-off, with a clock the
 * test moves: after each failed try the test moves the service's time to the next try.
 */
let world: World
let clock: ShiftableClock

beforeAll(async () => {
  clock = makeShiftableClock()
  world = await startWorld("events_schedule", {
    emitter: true,
    receiver: { kind: "fail", status: 500 },
    clock: clock.layer
  })
})

afterAll(() => world?.close())

const MINUTE = 60_000
const lowBalance = { type: "balance.low", data: { balance_credits: "10", balance_usd: "0.010" } } as const

const deliveryAfter = async (api: ReturnType<typeof orgApi>, eventId: string, attempts: number) =>
  eventually(async () => {
    const { json } = await api.deliveries()
    const d = json.deliveries.find((x: any) => x.event_id === eventId)
    return d !== undefined && d.attempts === attempts ? d : undefined
  }, { what: `try ${attempts}` })

/** Moves the service's clock just past `iso`. */
const moveTo = (iso: string) => clock.advance(Math.max(0, Date.parse(iso) - clock.now()) + 50)

describe("retry schedule", () => {
  it("retries after 1, 5, 15, 30, 60, 120, 240, 480 and 480 minutes, then marks the delivery failed", async () => {
    const org = await seedOrg(world.db)
    const api = orgApi(world.server.url, org.orgId, org.owner.sessionToken)
    const path = `/schedule-${org.orgId}`
    const made = await api.createWebhook({ url: world.receiver.url.replace("/hook", path) })
    const event = await world.emitter.emit(org.orgId, {
      type: "tool.paused",
      data: { tool_id: "t1", tool_name: "Tool", reason: "maintenance" }
    })
    const waits: Array<number> = []
    for (let attempt = 1; attempt <= 10; attempt++) {
      const delivery = await deliveryAfter(api, event.id, attempt)
      expect(delivery.last_status_code).toBe(500)
      expect(delivery.last_error).toBe("Answered HTTP 500")
      if (attempt < 10) {
        expect(delivery.status).toBe("pending")
        const wait = Date.parse(delivery.next_attempt_at) - Date.parse(delivery.last_attempt_at)
        waits.push(Math.floor(wait / MINUTE))
        // Nothing is sent before the next try is due.
        expect(world.receiver.received.filter((r) => r.path === path)).toHaveLength(attempt)
        moveTo(delivery.next_attempt_at)
      } else {
        expect(delivery.status).toBe("failed")
        expect(delivery.next_attempt_at).toBeNull()
      }
    }
    expect(waits).toEqual([1, 5, 15, 30, 60, 120, 240, 480, 480])
    // Ten tries in all, the same event id and body every time, each freshly signed.
    await workersSettled(["webhook worker"])
    const tries = world.receiver.received.filter((r) => r.path === path)
    expect(tries).toHaveLength(10)
    expect(new Set(tries.map((r) => r.headers["service-event-id"]))).toEqual(new Set([event.id]))
    expect(new Set(tries.map((r) => r.body)).size).toBe(1)
    const stamps = tries.map((r) =>
      independentlyVerify(made.json.webhook.secret, r.headers["service-signature"] as string, r.body)
    )
    expect(stamps.every((s) => s.valid)).toBe(true)
    for (let i = 1; i < stamps.length; i++) expect(stamps[i]!.t).toBeGreaterThan(stamps[i - 1]!.t)
    // Moving further on sends nothing more.
    clock.advance(24 * 60 * MINUTE)
    await workersSettled(["webhook worker"])
    expect(world.receiver.received.filter((r) => r.path === path)).toHaveLength(10)
  }, 60_000)

  it("fails a delivery when its next try would fall more than 24 hours after the event", async () => {
    const org = await seedOrg(world.db)
    const api = orgApi(world.server.url, org.orgId, org.owner.sessionToken)
    await api.createWebhook({ url: world.receiver.url.replace("/hook", `/cutoff-${org.orgId}`) })
    const event = await world.emitter.emit(org.orgId, lowBalance)
    const first = await deliveryAfter(api, event.id, 1)
    expect(first.status).toBe("pending")
    // The service was down for almost a day: the second try runs late, and a third would fall past 24 hours.
    clock.advance(23 * 60 * MINUTE + 57 * MINUTE)
    const second = await deliveryAfter(api, event.id, 2)
    expect(second.status).toBe("failed")
    expect(second.next_attempt_at).toBeNull()
    expect(second.last_error).toBe("Answered HTTP 500")
  })

  it("delivers on a later try once the receiver recovers, with the same event id", async () => {
    const org = await seedOrg(world.db)
    const api = orgApi(world.server.url, org.orgId, org.owner.sessionToken)
    const path = `/recover-${org.orgId}`
    const recovering = await startReceiver({ kind: "fail", status: 502 })
    try {
      await api.createWebhook({ url: recovering.url.replace("/hook", path) })
      const event = await world.emitter.emit(org.orgId, lowBalance)
      const first = await deliveryAfter(api, event.id, 1)
      recovering.setMode({ kind: "ok", status: 204 })
      moveTo(first.next_attempt_at)
      const second = await deliveryAfter(api, event.id, 2)
      expect(second).toMatchObject({
        status: "delivered",
        last_status_code: 204,
        last_error: null,
        next_attempt_at: null
      })
      expect(recovering.received.map((r) => r.headers["service-event-id"])).toEqual([event.id, event.id])
    } finally {
      await recovering.close()
    }
  })
})
