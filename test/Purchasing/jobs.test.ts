import { expect, layer } from "@effect/vitest"
import { Effect, Layer, Schema } from "effect"
import type { AuthenticatedAgent } from "../../src/Domain/Current.js"
import { JobId, OrgId, ReceiptId } from "../../src/Domain/Ids.js"
import { ExecuteRequest, Job, JobAccepted } from "../../src/Domain/Purchasing.js"
import { Execute } from "../../src/Services/Purchasing/Execute.js"
import { JobRunner, JobWorkersLive } from "../../src/Services/Purchasing/Jobs.js"
import { Receipts } from "../../src/Services/Purchasing/Receipts.js"
import { configOf } from "../support/config.js"
import { eventuallyEffect } from "../support/eventually.js"
import { agentOf, seedAgent } from "../support/fixtures.js"
import { inRealTime, PurchasingServices, purchasingTier, startWorkers, SuiteDatabase } from "../support/testLayers.js"
import { eventsOf, seedBuyer } from "./support.js"

/**
 * Jobs on the purchasing services, without HTTP (`GET /v1/jobs/{id}`'s wire is in
 * execute.test.ts): a job accepted by Execute is run by the job workers of replicas of the
 * service on the suite's database, each as a server runs it (`JobWorkersLive` over its own
 * pool and services, started in the test and stopped by it or with it). A replica stopped
 * mid-job is a restart; two at once share the jobs. Mock tools take 20 ms a try (real time),
 * so a 1,000-input job runs long enough to be interrupted.
 */
const rows = (text: string, values: ReadonlyArray<unknown> = []) =>
  Effect.flatMap(SuiteDatabase, (db) => Effect.promise(() => db.query(text, values)))

/** A buyer (an org and its test agent) and the agent as its key's check reads it. */
const buyer = Effect.gen(function*() {
  const db = yield* SuiteDatabase
  const seeded = yield* Effect.promise(() => seedBuyer({ db }))
  return { ...seeded, current: yield* Effect.promise(() => agentOf(db, seeded.agent.agentId)) }
})

/** POST /v1/execute's body through the service, for a job: its 202 answer as the wire encodes it. */
const acceptJob = (agent: AuthenticatedAgent, body: unknown) =>
  Effect.gen(function*() {
    const request = yield* Effect.orDie(Schema.decodeUnknown(ExecuteRequest)(body))
    const accepted = yield* Effect.orDie(Effect.flatMap(Execute, (execute) => execute.execute(agent, request, "")))
    if (!("job_id" in accepted)) throw new Error(`expected a job, got ${JSON.stringify(accepted)}`)
    return yield* Effect.orDie(Schema.encode(JobAccepted)(accepted))
  })

/** GET /v1/jobs/{id} through the service: the job as the wire encodes it. */
const jobOf = (orgId: string, id: string) =>
  Effect.flatMap(JobRunner, (runner) => runner.get(OrgId.make(orgId), JobId.make(id))).pipe(
    Effect.map(Schema.encodeSync(Job))
  )

/** The suite's settings: mock tools take 20 ms a try. */
const settings = { MOCK_TOOL_LATENCY_MS: "20" }

/**
 * A replica of the service, as far as jobs go: the job workers (`JobWorkersLive`) over
 * purchasing services of their own, started in the test as a server runs them (`startWorkers`:
 * a pool of its own, on the test's clock, the real one here) on the suite's database, with the
 * suite's settings and `env`. `stop` stops it as a server's shutdown does: its workers give
 * back their claims and leases.
 */
const startReplica = (env: Record<string, string> = {}) =>
  Effect.flatMap(
    SuiteDatabase,
    (db) =>
      startWorkers(JobWorkersLive.pipe(Layer.provide(PurchasingServices)), { DATABASE_POOL_SIZE: "10", ...env }).pipe(
        // The suite's settings under `env`: the tests' fibers, beside the TestContext, do not see them.
        Effect.withConfigProvider(configOf({ DATABASE_URL: db.url, ...settings }))
      )
  )

/** Input i passes, except every 10th fails its check and every 7th is partial. */
const pageInput = (i: number) => ({
  url: i % 10 === 9
    ? `https://mock-fail.example.com/${i}`
    : i % 7 === 6
    ? `https://mock-partial.example.com/${i}`
    : `https://news.example.com/${i}`
})
const expectedOutcome = (i: number) => (i % 10 === 9 ? "failed" : i % 7 === 6 ? "partial" : "passed")

/** Every hold of the agent settled exactly once, and what was captured is what the items cost. */
const expectSettledOnce = (agentId: string, receiptId: string) =>
  Effect.gen(function*() {
    const holds = yield* rows(
      `SELECT h.status, h.captured, i.cost_credits, i.status AS outcome
       FROM receipt_items i JOIN ledger_holds h ON h.id = i.hold_id WHERE i.receipt_id = $1`,
      [receiptId]
    )
    for (const hold of holds) {
      expect(hold.status).toBe(hold.outcome === "passed" || hold.outcome === "partial" ? "captured" : "released")
      expect(hold.captured).toBe(hold.cost_credits)
    }
    const [spend] = yield* rows(`SELECT spent, held FROM agent_month_spend WHERE agent_id = $1`, [agentId])
    const [charged] = yield* rows(
      `SELECT COALESCE(SUM(cost_credits), 0)::text AS sum FROM receipt_items i
       JOIN receipts r ON r.id = i.receipt_id WHERE r.agent_id = $1`,
      [agentId]
    )
    expect(spend.held).toBe("0")
    expect(spend.spent).toBe(charged.sum)
    return holds.length
  })

layer(purchasingTier("pjobs", settings), { timeout: 60_000 })("jobs", (it) => {
  it.scoped(
    "runs a 1,000-input job to the end across a restart in the middle",
    () =>
      inRealTime(Effect.gen(function*() {
        const { agent, current, org } = yield* buyer
        const accepted = yield* acceptJob(current, {
          tool: "jina-reader",
          inputs: Array.from({ length: 1000 }, (_, i) => pageInput(i))
        })
        expect(accepted.held).toEqual({ credits: "3000", usd: "3.000" })
        const jobId = accepted.job_id
        // Every item is held from the start.
        const [held] = yield* rows(`SELECT held FROM agent_month_spend WHERE agent_id = $1`, [agent.agentId])
        expect(held.held).toBe("3000")

        const first = yield* startReplica()
        const partWay = yield* eventuallyEffect(
          Effect.map(jobOf(org.orgId, jobId), (job) => job.progress.done >= 100 && job.progress.done < 1000 && job),
          { what: "the job part-way" }
        )
        expect(partWay.status).toBe("running")
        // The restart: the replica stops, and another starts on the same database.
        yield* first.stop
        const [doneBefore] = yield* rows(
          `SELECT count(*)::int AS n FROM receipt_items WHERE receipt_id = $1 AND status NOT IN ('pending', 'running')`,
          [accepted.receipt_id]
        )
        expect(doneBefore.n).toBeLessThan(1000)
        yield* startReplica()

        const finished = yield* eventuallyEffect(
          Effect.map(jobOf(org.orgId, jobId), (job) => job.status === "done" && job),
          { timeoutMs: 180_000, what: "the job done" }
        )
        expect(finished.progress).toEqual({ done: 1000, total: 1000 })
        expect(finished.items).toHaveLength(1000)
        expect(finished.items.map((item) => item.outcome)).toEqual(
          Array.from({ length: 1000 }, (_, i) => expectedOutcome(i))
        )
        const passed = finished.items.filter((i) => i.outcome === "passed").length
        const partial = finished.items.filter((i) => i.outcome === "partial").length
        expect(finished.counts).toEqual({ passed, partial, failed: 100, expired: 0, pending: 0 })
        expect(finished.charged.credits).toBe(String((passed + partial) * 3))
        expect(finished.items.every((i) => (i.outcome === "failed") === (i.result === null))).toBe(true)
        expect(yield* expectSettledOnce(agent.agentId, accepted.receipt_id)).toBe(1000)
        const db = yield* SuiteDatabase
        expect(yield* Effect.promise(() => eventsOf(db, org.orgId, "job.completed"))).toEqual([{
          job_id: jobId,
          status: "done",
          receipt_id: accepted.receipt_id,
          item_count: 1000,
          passed: passed + partial,
          expired: 0
        }])
        const receipt = yield* Effect.flatMap(
          Receipts,
          (receipts) => receipts.get(org.orgId, ReceiptId.make(accepted.receipt_id))
        )
        expect(receipt).toMatchObject({ status: "done", job_id: jobId, item_count: 1000 })
      })),
    240_000
  )

  it.scoped("two replicas share jobs and never run the same item", () =>
    inRealTime(Effect.gen(function*() {
      const { agent, current, org } = yield* buyer
      const jobs: Array<{ job_id: string; receipt_id: string }> = []
      for (let j = 0; j < 4; j++) {
        jobs.push(
          yield* acceptJob(current, {
            tool: "jina-reader",
            inputs: Array.from({ length: 200 }, (_, i) => ({ url: `https://news.example.com/${j}/${i}` }))
          })
        )
      }
      // Both start together with the jobs waiting: their three workers (two and one) each take
      // one as they come up.
      yield* Effect.all([startReplica(), startReplica({ JOB_WORKERS: "1" })], { concurrency: 2 })
      yield* eventuallyEffect(
        Effect.map(
          Effect.forEach(jobs, (job) => jobOf(org.orgId, job.job_id)),
          (states) => states.every((job) => job.status === "done")
        ),
        { timeoutMs: 180_000, what: "the four jobs done" }
      )
      const items = yield* rows(
        `SELECT runs, claimed_by FROM receipt_items WHERE receipt_id = ANY($1::uuid[])`,
        [jobs.map((job) => job.receipt_id)]
      )
      expect(items).toHaveLength(800)
      expect(items.every((item) => item.runs === 1)).toBe(true)
      const ran = new Set(items.map((item) => String(item.claimed_by).split(":")[1]))
      expect(ran.size).toBe(2)
      expect(yield* expectSettledOnce(agent.agentId, jobs[0]!.receipt_id)).toBe(200)
    })), 240_000)

  it.scoped("shows status, progress and per-item outcomes to the org's agents only", () =>
    inRealTime(Effect.gen(function*() {
      const { current, org } = yield* buyer
      const accepted = yield* acceptJob(current, {
        tool: "jina-reader",
        inputs: Array.from({ length: 30 }, (_, i) => pageInput(i))
      })
      yield* startReplica()
      const done = yield* eventuallyEffect(
        Effect.map(jobOf(org.orgId, accepted.job_id), (job) => job.status === "done" && job),
        { what: "the job done" }
      )
      expect(done).toMatchObject({
        id: accepted.job_id,
        receipt_id: accepted.receipt_id,
        tool: { slug: "jina-reader" },
        item_count: 30
      })
      expect(done.items[9]).toMatchObject({ index: 9, outcome: "failed", error_code: "check_failed", charged: false })
      expect(done.items[6]).toMatchObject({
        index: 6,
        outcome: "partial",
        charged: true,
        reason: "A paywall was detected"
      })
      expect((done.items[0]!.result as { final_url: string }).final_url).toBe("https://news.example.com/0")
      // Any agent of the org reads it (the job is the org's); another org finds no such job.
      const db = yield* SuiteDatabase
      const colleague = yield* Effect.promise(() => seedAgent(db, org.orgId))
      const colleagues = yield* Effect.promise(() => agentOf(db, colleague.agentId))
      expect(yield* jobOf(colleagues.org_id, accepted.job_id)).toEqual(done)
      const stranger = yield* buyer
      const hidden = yield* Effect.flip(jobOf(stranger.current.org_id, accepted.job_id))
      expect(hidden._tag).toBe("not_found")
    })))
})
