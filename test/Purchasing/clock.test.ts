import { it } from "@effect/vitest"
import { Duration, Effect, Fiber, TestClock } from "effect"
import { describe, expect } from "vitest"
import type { AuthenticatedAgent } from "../../src/Domain/Current.js"
import type { AgentId, OrgId } from "../../src/Domain/Ids.js"
import { Execute } from "../../src/Services/Purchasing/Execute.js"
import { JobRunner } from "../../src/Services/Purchasing/Jobs.js"
import { eventually } from "../support/eventually.js"
import { seedAgent } from "../support/fixtures.js"
import { purchasingTier, SuiteDatabase } from "../support/testLayers.js"
import { eventsOf, seedBuyer } from "./support.js"

/**
 * Time rules on a test clock (the 2-hour job run time, lapsed claims of a dead replica):
 * the purchasing services run in this process on a database of the test's own, with
 * TestClock as time.
 */
const servicesOn = (env: Record<string, string> = {}) => purchasingTier("pexpiry", env)

const testAgent = (agentId: AgentId, orgId: OrgId, key: string): AuthenticatedAgent => ({
  id: agentId,
  org_id: orgId,
  org_plan: "payg",
  name: "Test agent",
  mode: "test",
  monthly_budget_credits: 10_000_000n,
  approval_threshold_credits: null,
  key_prefix: key.slice(0, 12)
})

describe("on a test clock", () => {
  it.effect(
    "after 2 hours, items not yet run become expired and their holds are released",
    () =>
      Effect.gen(function*() {
        const db = yield* SuiteDatabase
        const { agent, org } = yield* Effect.promise(() => seedBuyer({ db }))
        const current: AuthenticatedAgent = {
          id: agent.agentId,
          org_id: org.orgId,
          org_plan: "payg",
          name: "Test agent",
          mode: "test",
          monthly_budget_credits: 10_000_000n,
          approval_threshold_credits: null,
          key_prefix: agent.key.slice(0, 12)
        }
        const execute = yield* Execute
        const runner = yield* JobRunner
        const accepted = yield* execute.execute(current, {
          tool: "jina-reader",
          inputs: Array.from({ length: 60 }, (_, i) => ({ url: `https://news.example.com/${i}` }))
        }, "http://localhost")
        // A job (answered 202 on the wire).
        if (!("job_id" in accepted)) throw new Error(`expected a job, got ${JSON.stringify(accepted)}`)
        const { job_id: jobId, receipt_id: receiptId } = accepted

        // One batch of 25 runs, then the worker stops.
        expect(yield* runner.runNext("worker:test:1", { maxBatches: 1 })).toBe(true)
        yield* TestClock.adjust(Duration.minutes(119))
        // Still inside the run time: another batch runs.
        expect(yield* runner.runNext("worker:test:2", { maxBatches: 1 })).toBe(true)
        yield* TestClock.adjust(Duration.minutes(1))
        // At 2 hours the rest expires and the job completes.
        expect(yield* runner.runNext("worker:test:3")).toBe(true)
        expect(yield* runner.runNext("worker:test:3")).toBe(false)

        const job = yield* runner.get(org.orgId, jobId)
        expect(job.status).toBe("done")
        expect(job.counts).toEqual({ passed: 50, partial: 0, failed: 0, expired: 10, pending: 0 })
        expect(job.items.slice(50).every((item) => item.status === "expired" && !item.charged)).toBe(true)
        expect(job.items[59]!.reason).toMatch(/2-hour run time/)
        expect(job.charged.credits).toBe("150")

        const holds = yield* Effect.promise(() =>
          db.query(
            `SELECT h.status, i.status AS outcome FROM receipt_items i JOIN ledger_holds h ON h.id = i.hold_id
           WHERE i.receipt_id = $1`,
            [receiptId]
          )
        )
        expect(holds.filter((h) => h.outcome === "expired").map((h) => h.status)).toEqual(Array(10).fill("released"))
        expect(holds.filter((h) => h.outcome === "passed").every((h) => h.status === "captured")).toBe(true)
        const [spend] = yield* Effect.promise(() =>
          db.query(`SELECT spent, held FROM agent_month_spend WHERE agent_id = $1`, [agent.agentId])
        )
        expect(spend).toEqual({ spent: "150", held: "0" })
        expect(yield* Effect.promise(() => eventsOf(db, org.orgId, "job.completed"))).toEqual([{
          job_id: jobId,
          status: "done",
          receipt_id: receiptId,
          item_count: 60,
          passed: 50,
          expired: 10
        }])
      }).pipe(Effect.provide(servicesOn())),
    60_000
  )

  it.effect("a job whose run time ended while nobody ran it expires every item", () =>
    Effect.gen(function*() {
      const db = yield* SuiteDatabase
      const { org } = yield* Effect.promise(() => seedBuyer({ db }))
      const other = yield* Effect.promise(() => seedAgent(db, org.orgId, { approvalThresholdCredits: null }))
      const execute = yield* Execute
      const runner = yield* JobRunner
      const accepted = yield* execute.execute(
        {
          id: other.agentId,
          org_id: org.orgId,
          org_plan: "payg",
          name: "Other",
          mode: "test",
          monthly_budget_credits: 50_000n,
          approval_threshold_credits: null,
          key_prefix: other.key.slice(0, 12)
        },
        { tool: "jina-reader", inputs: Array.from({ length: 40 }, (_, i) => ({ url: `https://a.example.com/${i}` })) },
        ""
      )
      if (!("job_id" in accepted)) throw new Error(`expected a job, got ${JSON.stringify(accepted)}`)
      const jobId = accepted.job_id
      yield* TestClock.adjust(Duration.hours(3))
      expect(yield* runner.runNext("worker:test:4")).toBe(true)
      const job = yield* runner.get(org.orgId, jobId)
      expect(job).toMatchObject({ status: "done", counts: { passed: 0, expired: 40 } })
      const [spend] = yield* Effect.promise(() =>
        db.query(`SELECT spent, held FROM agent_month_spend WHERE agent_id = $1`, [other.agentId])
      )
      expect(spend).toEqual({ spent: "0", held: "0" })
    }).pipe(Effect.provide(servicesOn())), 60_000)

  it.effect(
    "a direct purchase whose item's claim was taken over while it ran settles nothing of it",
    () =>
      Effect.gen(function*() {
        const db = yield* SuiteDatabase
        const { agent, org } = yield* Effect.promise(() => seedBuyer({ db }))
        const execute = yield* Execute
        // The mock tool takes 10 minutes (on the test clock): the claim changes hands meanwhile.
        const slow = yield* Effect.fork(execute.execute(testAgent(agent.agentId, org.orgId, agent.key), {
          tool: "hunter-email-finder",
          inputs: [{ first_name: "Jane", last_name: "Doe", domain: "acme.com" }]
        }, ""))
        yield* TestClock.adjust(Duration.millis(1))
        const item = () =>
          Effect.promise(() =>
            eventually(async () => {
              const rows = await db.query(
                `SELECT i.status, i.claimed_by, h.status AS hold FROM receipt_items i
                 JOIN receipts r ON r.id = i.receipt_id JOIN ledger_holds h ON h.id = i.hold_id
                 WHERE r.agent_id = $1`,
                [agent.agentId]
              )
              return rows[0]
            }, { what: "the purchase's item" })
          )
        expect(yield* item()).toMatchObject({ status: "running", hold: "held" })
        // Another runner takes the claim over (as after a lapsed lease).
        yield* Effect.promise(() =>
          db.query(
            `UPDATE receipt_items SET claimed_by = 'direct:another' WHERE receipt_id IN
               (SELECT id FROM receipts WHERE agent_id = $1)`,
            [agent.agentId]
          )
        )
        yield* TestClock.adjust(Duration.minutes(11))
        const exit = yield* Fiber.await(slow)
        // It answers that nothing was charged, and leaves the item and its hold to the new owner.
        expect(exit._tag === "Failure" && exit.cause._tag === "Fail" ? exit.cause.error._tag : exit._tag)
          .toBe("provider_error")
        expect(yield* item()).toEqual({ status: "running", claimed_by: "direct:another", hold: "held" })
        const [spend] = yield* Effect.promise(() =>
          db.query(`SELECT spent, held FROM agent_month_spend WHERE agent_id = $1`, [agent.agentId])
        )
        expect(spend.spent).toBe("0")
      }).pipe(Effect.provide(servicesOn({ MOCK_TOOL_LATENCY_MS: "600000" }))),
    60_000
  )

  it.effect(
    "a direct purchase that is still running keeps its lease: the sweeper leaves it alone however long it takes",
    () =>
      Effect.gen(function*() {
        const db = yield* SuiteDatabase
        const { agent, org } = yield* Effect.promise(() => seedBuyer({ db }))
        const execute = yield* Execute
        const runner = yield* JobRunner
        // The mock tool takes 10 minutes (on the test clock): the purchase runs a long time.
        const slow = yield* Effect.fork(execute.execute(testAgent(agent.agentId, org.orgId, agent.key), {
          tool: "hunter-email-finder",
          inputs: [{ first_name: "Jane", last_name: "Doe", domain: "acme.com" }],
          idempotency_key: "slow-1"
        }, ""))
        yield* TestClock.adjust(Duration.millis(1))
        const receipts = () =>
          Effect.promise(() => db.query(`SELECT id, status FROM receipts WHERE agent_id = $1`, [agent.agentId]))
        yield* Effect.promise(() =>
          eventually(
            async () => (await db.query(`SELECT 1 FROM receipts WHERE agent_id = $1`, [agent.agentId])).length > 0,
            { what: "the purchase's receipt" }
          )
        )
        expect((yield* receipts()).map((r) => r.status)).toEqual(["running"])
        // Its lease (5 minutes here, so the clock's one-minute steps never outrun a renewal
        // still being written) is renewed while it runs: no sweep takes it for a dead
        // replica's (a real crash is in test/hardening/idempotencyCrash.test.ts).
        for (let minute = 0; minute < 9; minute++) {
          yield* TestClock.adjust(Duration.minutes(1))
          expect(yield* runner.sweep).toBe(0)
        }
        expect((yield* receipts()).map((r) => r.status)).toEqual(["running"])
        const [key] = yield* Effect.promise(() =>
          db.query(`SELECT status FROM idempotency_keys WHERE agent_id = $1`, [agent.agentId])
        )
        expect(key).toEqual({ status: "in_progress" })
        // The slow try answers: the purchase finishes as usual and its answer is kept.
        yield* TestClock.adjust(Duration.minutes(2))
        const answer = yield* Fiber.join(slow)
        // The result (answered 200 on the wire).
        expect(answer).toMatchObject({ status: "done" })
        expect((yield* receipts()).map((r) => r.status)).toEqual(["done"])
        const [kept] = yield* Effect.promise(() =>
          db.query(
            `SELECT status, answer::jsonb ->> 'status' AS answer FROM idempotency_keys WHERE agent_id = $1`,
            [
              agent.agentId
            ]
          )
        )
        expect(kept).toEqual({ status: "done", answer: "done" })
      }).pipe(
        Effect.provide(servicesOn({ MOCK_TOOL_LATENCY_MS: "600000", IDEMPOTENCY_LEASE_MS: "300000" }))
      ),
    60_000
  )
})
