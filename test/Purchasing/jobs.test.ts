import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { seedAgent, seedOrg } from "../support/fixtures.js"
import { startServer, type TestServer } from "../support/server.js"
import { call, eventually, startWorld, type World } from "../support/world.js"
import { eventsOf, seedBuyer } from "./support.js"

/** Mock tools take 20 ms a try, so a 1,000-input job runs long enough to be interrupted. */
let world: World
beforeAll(async () => {
  world = await startWorld("pjobs", { smtp: true, env: { MOCK_TOOL_LATENCY_MS: "20" } })
})
afterAll(async () => {
  await world?.close()
})

const execute = (key: string, body: unknown) => call(world, "POST", "/v1/execute", { token: key, body })
const jobOf = (key: string, id: string) => call(world, "GET", `/v1/jobs/${id}`, { token: key })

/**
 * The job as a poll sees it: undefined while the agent's rate limit turns polls away (a
 * slow machine polls long enough to reach 600 a minute), any other answer but 200 fails.
 */
const polledJob = async (key: string, id: string) => {
  const job = await jobOf(key, id)
  if (job.status === 429) return undefined
  expect(job.status).toBe(200)
  return job.json.job
}

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
const expectSettledOnce = async (agentId: string, receiptId: string) => {
  const holds = await world.db.query(
    `SELECT h.status, h.captured, i.cost_credits, i.status AS outcome
     FROM receipt_items i JOIN ledger_holds h ON h.id = i.hold_id WHERE i.receipt_id = $1`,
    [receiptId]
  )
  for (const hold of holds) {
    expect(hold.status).toBe(hold.outcome === "passed" || hold.outcome === "partial" ? "captured" : "released")
    expect(hold.captured).toBe(hold.cost_credits)
  }
  const [spend] = await world.db.query(`SELECT spent, held FROM agent_month_spend WHERE agent_id = $1`, [agentId])
  const [charged] = await world.db.query(
    `SELECT COALESCE(SUM(cost_credits), 0)::text AS sum FROM receipt_items i
    JOIN receipts r ON r.id = i.receipt_id WHERE r.agent_id = $1`,
    [agentId]
  )
  expect(spend.held).toBe("0")
  expect(spend.spent).toBe(charged.sum)
  return holds.length
}

describe("jobs", () => {
  it("runs a 1,000-input job to the end across a restart in the middle", async () => {
    const { agent, org } = await seedBuyer(world)
    const accepted = await execute(agent.key, {
      tool: "jina-reader",
      inputs: Array.from({ length: 1000 }, (_, i) => pageInput(i))
    })
    expect(accepted.status).toBe(202)
    expect(accepted.json.held).toEqual({ credits: "3000", usd: "3.000" })
    const jobId = accepted.json.job_id
    // Every item is held from the start.
    const [held] = await world.db.query(`SELECT held FROM agent_month_spend WHERE agent_id = $1`, [agent.agentId])
    expect(held.held).toBe("3000")

    const partWay = await eventually(async () => {
      const job = await polledJob(agent.key, jobId)
      return job !== undefined && job.progress.done >= 100 && job.progress.done < 1000 && job
    })
    expect(partWay.status).toBe("running")
    await world.restart()
    const doneBefore = Number(
      (await world.db.query(
        `SELECT count(*)::int AS n FROM receipt_items WHERE receipt_id = $1 AND status NOT IN ('pending', 'running')`,
        [accepted.json.receipt_id]
      ))[0].n
    )
    expect(doneBefore).toBeLessThan(1000)

    const finished = await eventually(async () => {
      const job = await polledJob(agent.key, jobId)
      return job?.status === "done" && job
    }, { timeoutMs: 180_000 })
    expect(finished.progress).toEqual({ done: 1000, total: 1000 })
    expect(finished.items).toHaveLength(1000)
    expect(finished.items.map((item: any) => item.outcome)).toEqual(
      Array.from({ length: 1000 }, (_, i) => expectedOutcome(i))
    )
    const passed = finished.items.filter((i: any) => i.outcome === "passed").length
    const partial = finished.items.filter((i: any) => i.outcome === "partial").length
    expect(finished.counts).toEqual({ passed, partial, failed: 100, expired: 0, pending: 0 })
    expect(finished.charged.credits).toBe(String((passed + partial) * 3))
    expect(finished.items.every((i: any) => (i.outcome === "failed") === (i.result === null))).toBe(true)
    expect(await expectSettledOnce(agent.agentId, accepted.json.receipt_id)).toBe(1000)
    expect(await eventsOf(world.db, org.orgId, "job.completed")).toEqual([{
      job_id: jobId,
      status: "done",
      receipt_id: accepted.json.receipt_id,
      item_count: 1000,
      passed: passed + partial,
      expired: 0
    }])
    const receipt = await call(world, "GET", `/v1/receipts/${accepted.json.receipt_id}`, { token: agent.key })
    expect(receipt.json.receipt).toMatchObject({ status: "done", job_id: jobId, item_count: 1000 })
  }, 240_000)

  it("two replicas share jobs and never run the same item", async () => {
    const second: TestServer = await startServer({ ...world.env, JOB_WORKERS: "1" })
    try {
      const { agent } = await seedBuyer(world)
      const jobs: Array<{ job_id: string; receipt_id: string }> = []
      for (let j = 0; j < 4; j++) {
        const accepted = await execute(agent.key, {
          tool: "jina-reader",
          inputs: Array.from({ length: 200 }, (_, i) => ({ url: `https://news.example.com/${j}/${i}` }))
        })
        jobs.push(accepted.json)
      }
      await eventually(async () => {
        const states = await Promise.all(jobs.map((job) => polledJob(agent.key, job.job_id)))
        return states.every((job) => job?.status === "done")
      }, { timeoutMs: 180_000 })
      const items = await world.db.query(
        `SELECT runs, claimed_by FROM receipt_items WHERE receipt_id = ANY($1::uuid[])`,
        [jobs.map((job) => job.receipt_id)]
      )
      expect(items).toHaveLength(800)
      expect(items.every((item) => item.runs === 1)).toBe(true)
      const replicas = new Set(items.map((item) => String(item.claimed_by).split(":")[1]))
      expect(replicas.size).toBe(2)
      expect(await expectSettledOnce(agent.agentId, jobs[0]!.receipt_id)).toBe(200)
    } finally {
      await second.close()
    }
  }, 240_000)

  it("shows status, progress and per-item outcomes to the org's agents only", async () => {
    const { agent, org } = await seedBuyer(world)
    const accepted = await execute(agent.key, {
      tool: "jina-reader",
      inputs: Array.from({ length: 30 }, (_, i) => pageInput(i))
    })
    const done = await eventually(async () => {
      const job = await polledJob(agent.key, accepted.json.job_id)
      return job?.status === "done" && job
    })
    expect(done).toMatchObject({
      id: accepted.json.job_id,
      receipt_id: accepted.json.receipt_id,
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
    expect(done.items[0].result.final_url).toBe("https://news.example.com/0")
    const colleague = await seedAgent(world.db, org.orgId)
    expect((await jobOf(colleague.key, accepted.json.job_id)).status).toBe(200)
    const stranger = await seedBuyer(world)
    const hidden = await jobOf(stranger.agent.key, accepted.json.job_id)
    expect(hidden.status).toBe(404)
    expect(hidden.json.error.code).toBe("not_found")
    const other = await seedOrg(world.db)
    expect((await call(world, "GET", `/v1/jobs/${accepted.json.job_id}`, { token: other.owner.sessionToken })).status)
      .toBe(401)
  })
})
