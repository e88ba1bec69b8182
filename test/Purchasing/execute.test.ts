import { Cause, Exit, Option } from "effect"
import { createHash, randomUUID } from "node:crypto"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { ReceiptId } from "../../src/Domain/Ids.js"
import { CheckFailed, UnknownTool } from "../../src/Errors/ApiErrors.js"
import { canonicalJson } from "../../src/Services/Purchasing/Canonical.js"
import { verifyWithJose } from "../Receipts/support.js"
import { addMember, seedAdmin, seedAgent, seedOrgKey, seedUser } from "../support/fixtures.js"
import { api, type ApiClient, call, eventually, startWorld, type World } from "../support/world.js"
import { emailFindInput, eventsOf, seedBuyer } from "./support.js"

/**
 * The purchasing routes' wire in one suite (one service): execute's answers and refusals,
 * jobs, cached agent keys, receipts, disputes and recommendations, with their status codes,
 * bodies and who may call them.
 */
let world: World
beforeAll(async () => {
  world = await startWorld("pexecute", { smtp: true })
})
afterAll(async () => {
  await world?.close()
})

const execute = (key: string, body: unknown) => call(world, "POST", "/v1/execute", { token: key, body })

const spentOf = async (agentId: string) => {
  const rows = await world.db.query(`SELECT spent, held FROM agent_month_spend WHERE agent_id = $1`, [agentId])
  return { spent: BigInt(rows[0]?.spent ?? 0), held: BigInt(rows[0]?.held ?? 0) }
}

describe("POST /v1/execute: refusals", () => {
  it("answers 404 unknown_tool for an unknown id or slug", async () => {
    const { agent } = await seedBuyer(world)
    for (const tool of ["no-such-tool", "7d0f5f39-0000-4000-8000-000000000000"]) {
      const answer = await execute(agent.key, { tool, inputs: [emailFindInput(1)] })
      expect(answer.status).toBe(404)
      expect(answer.json.error).toMatchObject({ code: "unknown_tool", retryable: false })
    }
  })

  it("accepts a tool by id as well as by slug", async () => {
    const { agent } = await seedBuyer(world)
    const tools = await call(world, "GET", "/v1/tools")
    const hunter = tools.json.tools.find((t: any) => t.slug === "hunter-email-finder")
    const answer = await execute(agent.key, { tool: hunter.id, inputs: [emailFindInput(1)] })
    expect(answer.status).toBe(200)
    expect(answer.json.tool.slug).toBe("hunter-email-finder")
  })

  it("answers 400 invalid_input for 0 or more than 1,000 inputs, missing or unknown fields", async () => {
    const { agent } = await seedBuyer(world)
    const cases = [
      { tool: "hunter-email-finder", inputs: [] },
      { tool: "hunter-email-finder", inputs: Array.from({ length: 1001 }, (_, i) => emailFindInput(i)) },
      { tool: "hunter-email-finder", inputs: [{ first_name: "Jane", last_name: "Doe" }] },
      { tool: "hunter-email-finder", inputs: [{ ...emailFindInput(1), nickname: "JD" }] },
      { tool: "hunter-email-finder", inputs: [{ ...emailFindInput(1), domain: "" }] },
      { tool: "hunter-email-finder", inputs: "not a list" },
      { tool: "hunter-email-finder", inputs: [emailFindInput(1)], max_price: -5 }
    ]
    for (const body of cases) {
      const answer = await execute(agent.key, body)
      expect(answer.status, JSON.stringify(body).slice(0, 80)).toBe(400)
      expect(answer.json.error.code).toBe("invalid_input")
    }
    const missing = await execute(agent.key, cases[2])
    expect(missing.json.error.message).toMatch(/inputs\[0\]\.domain is required/)
    expect((await spentOf(agent.agentId)).spent).toBe(0n)
  })

  it("answers 402 price_above_max when price x inputs is above max_price, and accepts it at the cap", async () => {
    const { agent } = await seedBuyer(world)
    const inputs = [emailFindInput(1), emailFindInput(2), emailFindInput(3)]
    const over = await execute(agent.key, { tool: "hunter-email-finder", inputs, max_price: 119 })
    expect(over.status).toBe(402)
    expect(over.json.error).toMatchObject({ code: "price_above_max", retryable: false })
    expect(over.json.error.message).toContain("120 credits")
    const at = await execute(agent.key, { tool: "hunter-email-finder", inputs, max_price: "120" })
    expect(at.status).toBe(200)
    expect(at.json.charged).toEqual({ credits: "120", usd: "0.120" })
  })

  it("answers 409 tool_paused for a paused tool, 409 not_purchasable for an information-only one and 409 tool_unavailable for an unpriced live one", async () => {
    const { agent } = await seedBuyer(world)
    const paused = await execute(agent.key, { tool: "snov-email-finder", inputs: [emailFindInput(1)] })
    expect(paused.status).toBe(409)
    expect(paused.json.error.code).toBe("tool_paused")
    const info = await execute(agent.key, { tool: "clearbit-company-enrichment", inputs: [{ domain: "acme.com" }] })
    expect(info.status).toBe(409)
    expect(info.json.error.code).toBe("not_purchasable")
    const unpriced = await execute(agent.key, { tool: "emailable-verify", inputs: [{ email: "a@acme.com" }] })
    expect(unpriced.status).toBe(409)
    expect(unpriced.json.error.code).toBe("tool_unavailable")
    expect(unpriced.json.error.message).toContain("no price_per_success_credits")
  })

  it("answers 501 live_execute_unavailable to live agents", async () => {
    const { org } = await seedBuyer(world)
    const live = await seedAgent(world.db, org.orgId, { mode: "live" })
    const answer = await execute(live.key, { tool: "hunter-email-finder", inputs: [emailFindInput(1)] })
    expect(answer.status).toBe(501)
    expect(answer.json.error).toMatchObject({ code: "live_execute_unavailable", retryable: false })
    expect(await world.db.query(`SELECT 1 FROM receipts WHERE agent_id = $1`, [live.agentId])).toHaveLength(0)
  })
})

describe("POST /v1/execute: results", () => {
  it("charges a result that passes, records the check version and the SHA-256 of the canonical result", async () => {
    const { agent, org } = await seedBuyer(world)
    const answer = await execute(agent.key, { tool: "hunter-email-finder", inputs: [emailFindInput(7)] })
    expect(answer.status).toBe(200)
    expect(answer.json).toMatchObject({
      status: "done",
      mode: "test",
      item_count: 1,
      charged: { credits: "40", usd: "0.040" },
      counts: { passed: 1, partial: 0, failed: 0, expired: 0, pending: 0 },
      fallback_used: false
    })
    const [item] = answer.json.items
    expect(item).toMatchObject({
      index: 0,
      outcome: "passed",
      charged: true,
      provider: "hunter",
      check: { id: "email_find.deliverable_address", version: "1.2.0" },
      cost: { credits: "40", usd: "0.040" }
    })
    expect(item.result.email).toBe("jane7.doe@acme7.example.com")
    expect(item.result_hash).toBe(createHash("sha256").update(canonicalJson(item.result)).digest("hex"))
    // A test agent spends its budget, never the org's credits.
    expect(await spentOf(agent.agentId)).toEqual({ spent: 40n, held: 0n })
    const balance = await world.db.query(`SELECT balance FROM org_balances WHERE org_id = $1`, [org.orgId])
    expect(balance[0]?.balance ?? "0").toBe("0")
    const receipt = await call(world, "GET", `/v1/receipts/${answer.json.receipt_id}`, { token: agent.key })
    expect(receipt.json.receipt.items[0].result_hash).toBe(item.result_hash)
    expect(receipt.json.receipt.items[0]).not.toHaveProperty("result")
  })

  it("answers check_failed (HTTP 200) with a reason when the result fails its check, and charges nothing", async () => {
    const { agent } = await seedBuyer(world)
    const answer = await execute(agent.key, { tool: "hunter-email-finder", inputs: [emailFindInput(1, "mock-fail")] })
    expect(answer.status).toBe(200)
    expect(answer.json.error).toMatchObject({ code: "check_failed", retryable: false })
    expect(answer.json.reason).toBe("The SMTP probe did not accept the address")
    expect(answer.json.check).toEqual({ id: "email_find.deliverable_address", version: "1.2.0" })
    expect(answer.json.items).toEqual([{ index: 0, reason: "The SMTP probe did not accept the address" }])
    expect(await spentOf(agent.agentId)).toEqual({ spent: 0n, held: 0n })
    const receipt = await call(world, "GET", `/v1/receipts/${answer.json.receipt_id}`, { token: agent.key })
    expect(receipt.json.receipt).toMatchObject({ charged: { credits: "0" }, counts: { failed: 1 } })
    expect(receipt.json.receipt.items[0]).toMatchObject({
      outcome: "failed",
      charged: false,
      error_code: "check_failed"
    })
  })

  it("charges passed and partial results, not failed ones, in one answer", async () => {
    const { agent } = await seedBuyer(world)
    const answer = await execute(agent.key, {
      tool: "jina-reader",
      inputs: [
        { url: "https://news.example.com/a" },
        { url: "https://mock-partial.example.com/b" },
        { url: "https://mock-fail.example.com/c" }
      ]
    })
    expect(answer.status).toBe(200)
    expect(answer.json.items.map((i: any) => [i.outcome, i.charged, i.cost.credits])).toEqual([
      ["passed", true, "3"],
      ["partial", true, "3"],
      ["failed", false, "0"]
    ])
    expect(answer.json.items[1].reason).toBe("A paywall was detected")
    expect(answer.json.items[2].reason).toBe("The main text is shorter than 200 characters")
    expect(answer.json.items[2].result).toBeNull()
    expect(answer.json.charged.credits).toBe("6")
    expect((await spentOf(agent.agentId)).spent).toBe(6n)
  })

  it("retries a failed provider once", async () => {
    const { agent } = await seedBuyer(world)
    const answer = await execute(agent.key, { tool: "hunter-email-finder", inputs: [emailFindInput(1, "mock-flaky")] })
    expect(answer.status).toBe(200)
    expect(answer.json.items[0].outcome).toBe("passed")
  })

  it("answers 502 provider_error when the provider fails after one retry, and charges nothing", async () => {
    const { agent } = await seedBuyer(world)
    const answer = await execute(agent.key, {
      tool: "hunter-email-finder",
      inputs: [emailFindInput(1, "mock-provider-error")]
    })
    expect(answer.status).toBe(502)
    expect(answer.json.error).toMatchObject({ code: "provider_error", retryable: true })
    expect(answer.json.error.message).toMatch(/nothing was charged/)
    expect(await spentOf(agent.agentId)).toEqual({ spent: 0n, held: 0n })
    const holds = await world.db.query(`SELECT status FROM ledger_holds WHERE agent_id = $1`, [agent.agentId])
    expect(holds.map((h) => h.status)).toEqual(["released"])
  })

  it("with fallback: true uses the next-best purchasable tool of the task type, and the receipt says so", async () => {
    const { agent } = await seedBuyer(world)
    const scores = await call(world, "GET", "/v1/scores?task_type=email_find")
    // The next-best purchasable tool no dearer than findymail (60 credits).
    const next = scores.json.scores.find((s: any) => s.slug !== "findymail-email-finder" && s.purchasable)
    const tools = await call(world, "GET", "/v1/tools")
    const nextTool = tools.json.tools.find((t: any) => t.slug === next.slug)
    const findymail = tools.json.tools.find((t: any) => t.slug === "findymail-email-finder")
    const down = emailFindInput(3, "mock-down-findymail")
    const without = await execute(agent.key, { tool: "findymail-email-finder", inputs: [down] })
    expect(without.status).toBe(502)
    const answer = await execute(agent.key, {
      tool: "findymail-email-finder",
      inputs: [down, emailFindInput(4)],
      fallback: true
    })
    expect(answer.status).toBe(200)
    expect(answer.json.fallback_used).toBe(true)
    expect(answer.json.items[0]).toMatchObject({
      outcome: "passed",
      tool_id: nextTool.id,
      provider: nextTool.provider,
      fallback_from_tool_id: findymail.id,
      cost: { credits: nextTool.price_per_success.credits }
    })
    expect(answer.json.items[1]).toMatchObject({
      tool_id: findymail.id,
      fallback_from_tool_id: null,
      cost: { credits: "60" }
    })
    const receipt = await call(world, "GET", `/v1/receipts/${answer.json.receipt_id}`, { token: agent.key })
    expect(receipt.json.receipt).toMatchObject({ fallback_requested: true, fallback_used: true })
    expect(receipt.json.receipt.items[0].fallback_from_tool_id).toBe(findymail.id)
    expect((await spentOf(agent.agentId)).spent).toBe(60n + BigInt(nextTool.price_per_success.credits))
    // Every provider down: still provider_error, nothing charged.
    const all = await execute(agent.key, {
      tool: "findymail-email-finder",
      inputs: [emailFindInput(5, "mock-provider-error")],
      fallback: true
    })
    expect(all.status).toBe(502)
    expect(all.json.error.message).toMatch(/findymail-email-finder: .*; /)
  })

  it("runs up to 25 inputs directly and more as a job", async () => {
    const { agent } = await seedBuyer(world)
    const direct = await execute(agent.key, {
      tool: "jina-reader",
      inputs: Array.from({ length: 25 }, (_, i) => ({ url: `https://news.example.com/${i}` }))
    })
    expect(direct.status).toBe(200)
    expect(direct.json.items).toHaveLength(25)
    const job = await execute(agent.key, {
      tool: "jina-reader",
      inputs: Array.from({ length: 26 }, (_, i) => ({ url: `https://news.example.com/${i}` }))
    })
    expect(job.status).toBe(202)
    expect(job.json).toMatchObject({ status: "queued", item_count: 26, held: { credits: "78", usd: "0.078" } })
    expect(job.json.job_id).toMatch(/^[0-9a-f-]{36}$/)
  })
})

describe("GET /v1/jobs/{id}", () => {
  /**
   * The job as a poll sees it: undefined while the agent's rate limit turns polls away (a slow
   * machine polls long enough to reach 600 a minute), any other answer but 200 fails.
   */
  const polledJob = async (key: string, id: string) => {
    const job = await call(world, "GET", `/v1/jobs/${id}`, { token: key })
    if (job.status === 429) return undefined
    expect(job.status).toBe(200)
    return job.json.job
  }

  it("answers the job to the org's agents (200), 404 not_found to another org's agent and 401 to a session", async () => {
    const { agent, org } = await seedBuyer(world)
    const accepted = await execute(agent.key, {
      tool: "jina-reader",
      inputs: Array.from({ length: 30 }, (_, i) => ({ url: `https://news.example.com/${i}` }))
    })
    expect(accepted.status).toBe(202)
    const done = await eventually(async () => {
      const job = await polledJob(agent.key, accepted.json.job_id)
      return job?.status === "done" && job
    }, { what: "the job done" })
    expect(Object.keys(done).sort()).toEqual([
      "charged",
      "completed_at",
      "counts",
      "created_at",
      "deadline_at",
      "id",
      "item_count",
      "items",
      "progress",
      "receipt_id",
      "started_at",
      "status",
      "tool"
    ])
    expect(done).toMatchObject({
      id: accepted.json.job_id,
      receipt_id: accepted.json.receipt_id,
      tool: { slug: "jina-reader" },
      item_count: 30,
      progress: { done: 30, total: 30 },
      charged: { credits: "90", usd: "0.090" }
    })
    expect(done.items[0]).toMatchObject({ index: 0, outcome: "passed", charged: true })
    expect(done.items[0].result.final_url).toBe("https://news.example.com/0")

    const colleague = await seedAgent(world.db, org.orgId)
    const read = await call(world, "GET", `/v1/jobs/${accepted.json.job_id}`, { token: colleague.key })
    expect(read.status).toBe(200)
    expect(read.json.job).toEqual(done)
    const stranger = await seedBuyer(world)
    const hidden = await call(world, "GET", `/v1/jobs/${accepted.json.job_id}`, { token: stranger.agent.key })
    expect(hidden.status).toBe(404)
    expect(hidden.json.error.code).toBe("not_found")
    const session = await call(world, "GET", `/v1/jobs/${accepted.json.job_id}`, { token: org.owner.sessionToken })
    expect(session.status).toBe(401)
  })
})

describe("POST /v1/execute through the typed client (HttpApiClient of the contract)", () => {
  const executeTyped = (key: string, payload: Parameters<ApiClient["purchasing"]["execute"]>[0]["payload"]) =>
    api(world, key, (client) => client.purchasing.execute({ payload }))

  it("decodes every answer of execute into its declared variant: result, check_failed, job", async () => {
    const { agent } = await seedBuyer(world)
    const done = await executeTyped(agent.key, { tool: "hunter-email-finder", inputs: [emailFindInput(1)] })
    expect(Exit.isSuccess(done) && done.value).toMatchObject({
      status: "done",
      item_count: 1,
      charged: { credits: "40", usd: "0.040" },
      counts: { passed: 1 }
    })

    const failed = await executeTyped(agent.key, {
      tool: "hunter-email-finder",
      inputs: [emailFindInput(2, "mock-fail")]
    })
    // A 200 with the error body decodes back into the error class, as a success variant.
    if (!Exit.isSuccess(failed)) throw new Error(`expected a success variant, got ${String(failed.cause)}`)
    expect(failed.value).toBeInstanceOf(CheckFailed)
    expect(failed.value).toMatchObject({
      reason: "The SMTP probe did not accept the address",
      check: { id: "email_find.deliverable_address", version: "1.2.0" }
    })

    const job = await executeTyped(agent.key, {
      tool: "jina-reader",
      inputs: Array.from({ length: 26 }, (_, i) => ({ url: `https://typed.example.com/${i}` }))
    })
    expect(Exit.isSuccess(job) && job.value).toMatchObject({ status: "queued", item_count: 26 })
  })

  it("fails with the typed error of the code, and receipts read back through the same client", async () => {
    const { agent } = await seedBuyer(world)
    const unknown = await executeTyped(agent.key, { tool: "no-such-tool", inputs: [emailFindInput(1)] })
    const error = Exit.isFailure(unknown) ? Cause.failureOption(unknown.cause) : Option.none()
    expect(Option.isSome(error) && error.value).toBeInstanceOf(UnknownTool)

    const done = await executeTyped(agent.key, { tool: "hunter-email-finder", inputs: [emailFindInput(3)] })
    if (!Exit.isSuccess(done) || !("status" in done.value) || done.value.status !== "done") {
      throw new Error("expected a purchase")
    }
    const receiptId = done.value.receipt_id
    const receipt = await api(
      world,
      agent.key,
      (client) => client.purchasing.receipt({ path: { id: ReceiptId.make(receiptId) } })
    )
    expect(Exit.isSuccess(receipt) && receipt.value.receipt).toMatchObject({ id: receiptId, counts: { passed: 1 } })
  })
})

describe("with an agent key from the replica's cache", () => {
  /**
   * A purchase may take its agent key from the replica's cache; the statement that writes
   * the purchase checks it again, and nothing else is done for a cached key before that
   * check. Changes are written straight into the database, as another replica (or an
   * owner's dashboard on another replica) would make them: nothing tells this cache.
   */

  const execute = (key: string, body: unknown) => call(world, "POST", "/v1/execute", { token: key, body })
  const purchase = (i: number, extra: Record<string, unknown> = {}) => ({
    tool: "hunter-email-finder",
    inputs: [emailFindInput(i)],
    ...extra
  })

  /** A test agent whose key is now in this replica's cache (a purchase it was refused). */
  const cachedBuyer = async (
    options: { readonly approvalThresholdCredits?: bigint; readonly mode?: "test" | "live" } = {}
  ) => {
    const buyer = await seedBuyer(world, options)
    const refused = await execute(buyer.agent.key, { ...purchase(0), tool: "no-such-tool" })
    expect(refused.status).toBe(options.mode === "live" ? 501 : 404)
    return buyer
  }

  const written = async (agentId: string) =>
    (await world.db.query(
      `SELECT (SELECT count(*)::int FROM receipts WHERE agent_id = $1) AS receipts,
              (SELECT count(*)::int FROM ledger_holds WHERE agent_id = $1) AS holds,
              (SELECT count(*)::int FROM purchase_approvals WHERE agent_id = $1) AS approvals`,
      [agentId]
    ))[0]

  describe("cached agent keys on POST /v1/execute", () => {
    it("refuses a key revoked elsewhere at once, writing nothing", async () => {
      const { agent } = await cachedBuyer()
      await world.db.query(`UPDATE agents SET key_hash = NULL WHERE id = $1`, [agent.agentId])
      const refused = await execute(agent.key, purchase(1))
      expect(refused.status).toBe(401)
      expect(refused.json.error.code).toBe("unauthenticated")
      expect(await written(agent.agentId)).toEqual({ receipts: 0, holds: 0, approvals: 0 })
    })

    it("answers a revoked key's purchase that would be refused with 401, not the refusal", async () => {
      const { agent } = await cachedBuyer()
      await world.db.query(`UPDATE agents SET key_hash = NULL WHERE id = $1`, [agent.agentId])
      expect((await execute(agent.key, { ...purchase(2), tool: "no-such-tool" })).status).toBe(401)
    })

    it("refuses a disabled agent's purchase under a used key instead of replaying it", async () => {
      const { agent } = await cachedBuyer()
      const body = purchase(3, { idempotency_key: "kept" })
      expect((await execute(agent.key, body)).status).toBe(200)
      await world.db.query(`UPDATE agents SET status = 'disabled' WHERE id = $1`, [agent.agentId])
      expect((await execute(agent.key, body)).status).toBe(401)
    })

    it("serves an agent enabled elsewhere at once: a refused key is never answered from the cache", async () => {
      const { agent } = await seedBuyer(world)
      await world.db.query(`UPDATE agents SET status = 'disabled' WHERE id = $1`, [agent.agentId])
      expect((await execute(agent.key, purchase(8))).status).toBe(401)
      await world.db.query(`UPDATE agents SET status = 'active' WHERE id = $1`, [agent.agentId])
      expect((await execute(agent.key, purchase(9))).status).toBe(200)
    })

    it("applies an approval threshold lowered elsewhere at once", async () => {
      const { agent } = await cachedBuyer()
      await world.db.query(`UPDATE agents SET approval_threshold_credits = 1 WHERE id = $1`, [agent.agentId])
      const asked = await execute(agent.key, purchase(4))
      expect(asked.status).toBe(202)
      expect(asked.json.error.code).toBe("approval_required")
      expect(await written(agent.agentId)).toMatchObject({ receipts: 0, approvals: 1 })
    })

    it("asks no approval the agent no longer needs: a threshold removed elsewhere applies at once", async () => {
      const { agent } = await cachedBuyer({ approvalThresholdCredits: 1n })
      await world.db.query(`UPDATE agents SET approval_threshold_credits = NULL WHERE id = $1`, [agent.agentId])
      expect((await execute(agent.key, purchase(5))).status).toBe(200)
      expect(await written(agent.agentId)).toMatchObject({ receipts: 1, approvals: 0 })
    })

    it("a live agent switched to test elsewhere buys as a test one at once", async () => {
      // Live purchases are not open here (501): a stale live credential must not answer that.
      const { agent } = await cachedBuyer({ mode: "live" })
      await world.db.query(`UPDATE agents SET mode = 'test' WHERE id = $1`, [agent.agentId])
      expect((await execute(agent.key, purchase(7))).status).toBe(200)
    })

    it("a test agent switched to live elsewhere is refused as a live one at once", async () => {
      const { agent } = await cachedBuyer()
      await world.db.query(`UPDATE agents SET mode = 'live' WHERE id = $1`, [agent.agentId])
      const refused = await execute(agent.key, purchase(6))
      expect(refused.status).toBe(501)
      expect(refused.json.error.code).toBe("live_execute_unavailable")
    })
  })
})

describe("receipts and disputes", () => {
  let admin: { adminId: string; token: string }
  beforeAll(async () => {
    admin = await seedAdmin(world.db)
  })

  const execute = (key: string, body: unknown) => call(world, "POST", "/v1/execute", { token: key, body })
  const dispute = (key: string, body: unknown) => call(world, "POST", "/v1/disputes", { token: key, body })
  const decide = (id: string, body: unknown, token = admin.token) =>
    call(world, "POST", `/admin/disputes/${id}/decide`, { token, body })
  const spentOf = async (agentId: string) =>
    (await world.db.query(`SELECT spent FROM agent_month_spend WHERE agent_id = $1`, [agentId]))[0]?.spent ?? "0"

  /** A purchase of three results: passed, partial, failed. */
  const buyMixed = async (key: string) => {
    const answer = await execute(key, {
      tool: "hunter-email-finder",
      inputs: [emailFindInput(1), emailFindInput(2, "mock-partial"), emailFindInput(3, "mock-fail")]
    })
    expect(answer.status).toBe(200)
    return answer.json.receipt_id as string
  }

  describe("receipts", () => {
    it("lists the org's receipts newest first with a cursor, for agents, members and org keys", async () => {
      const { agent, org } = await seedBuyer(world)
      const colleague = await seedAgent(world.db, org.orgId, { approvalThresholdCredits: null })
      const ids: Array<string> = []
      for (let i = 0; i < 3; i++) {
        const answer = await execute(i === 1 ? colleague.key : agent.key, {
          tool: "jina-reader",
          inputs: [{ url: `https://x.example.com/${i}` }]
        })
        ids.push(answer.json.receipt_id)
      }
      const all = await call(world, "GET", "/v1/receipts", { token: agent.key })
      expect(all.status).toBe(200)
      expect(all.json.receipts.map((r: any) => r.id)).toEqual([...ids].reverse())
      expect(all.json.has_more).toBe(false)
      const page1 = await call(world, "GET", "/v1/receipts?limit=2", { token: agent.key })
      expect(page1.json.receipts.map((r: any) => r.id)).toEqual([ids[2], ids[1]])
      expect(page1.json.has_more).toBe(true)
      const page2 = await call(world, "GET", `/v1/receipts?limit=2&starting_after=${ids[1]}`, { token: agent.key })
      expect(page2.json.receipts.map((r: any) => r.id)).toEqual([ids[0]])
      expect(all.json.receipts[0]).toMatchObject({
        org_id: org.orgId,
        mode: "test",
        tool: { slug: "jina-reader" },
        task_type: "web_extract",
        status: "done",
        item_count: 1,
        price_per_item: { credits: "3", usd: "0.003" },
        charged: { credits: "3", usd: "0.003" },
        refunded: { credits: "0", usd: "0.000" }
      })
      expect(all.json.receipts[0]).not.toHaveProperty("items")

      const member = await seedUser(world.db)
      await addMember(world.db, org.orgId, member.userId, "member")
      const readKey = await seedOrgKey(world.db, org.orgId, member, "read")
      for (const token of [org.owner.sessionToken, member.sessionToken, readKey.secret]) {
        const list = await call(world, "GET", `/v1/orgs/${org.orgId}/receipts`, { token })
        expect(list.status).toBe(200)
        expect(list.json.receipts.map((r: any) => r.id)).toEqual([...ids].reverse())
        const one = await call(world, "GET", `/v1/orgs/${org.orgId}/receipts/${ids[0]}`, { token })
        expect(one.json.receipt.items).toHaveLength(1)
      }
      const stranger = await seedBuyer(world)
      expect((await call(world, "GET", `/v1/receipts/${ids[0]}`, { token: stranger.agent.key })).status).toBe(404)
      // Another org's owner does not see that the org exists.
      expect(
        (await call(world, "GET", `/v1/orgs/${org.orgId}/receipts`, { token: stranger.org.owner.sessionToken })).status
      )
        .toBe(404)
      expect((await call(world, "GET", "/v1/receipts?starting_after=nope", { token: agent.key })).status).toBe(404)
    })

    it("records per item provider, cost, result hash, check version, outcome and refund", async () => {
      const { agent } = await seedBuyer(world)
      const id = await buyMixed(agent.key)
      const { json } = await call(world, "GET", `/v1/receipts/${id}`, { token: agent.key })
      expect(json.receipt).toMatchObject({ charged: { credits: "80" }, counts: { passed: 1, partial: 1, failed: 1 } })
      expect(
        json.receipt.items.map((i: any) => [i.outcome, i.provider, i.cost.credits, i.refund.credits, i.check.version])
      )
        .toEqual([
          ["passed", "hunter", "40", "0", "1.2.0"],
          ["partial", "hunter", "40", "0", "1.2.0"],
          ["failed", "hunter", "0", "0", "1.2.0"]
        ])
      expect(json.receipt.items.every((i: any) => /^[0-9a-f]{64}$/.test(i.result_hash))).toBe(true)
    })
  })

  describe("a receipt's items with inputs and results", () => {
    it("lists them by index, a page at a time, for the org's members and org keys only", async () => {
      const { agent, org } = await seedBuyer(world)
      const id = await buyMixed(agent.key)
      const path = `/v1/orgs/${org.orgId}/receipts/${id}/items`
      const member = await seedUser(world.db)
      await addMember(world.db, org.orgId, member.userId, "member")
      const readKey = await seedOrgKey(world.db, org.orgId, member, "read")
      for (const token of [org.owner.sessionToken, member.sessionToken, readKey.secret]) {
        const all = await call(world, "GET", path, { token })
        expect(all.status).toBe(200)
        expect(all.json.has_more).toBe(false)
        expect(all.json.items.map((i: any) => [i.index, i.outcome, i.input])).toEqual([
          [0, "passed", emailFindInput(1)],
          [1, "partial", emailFindInput(2, "mock-partial")],
          [2, "failed", emailFindInput(3, "mock-fail")]
        ])
      }
      const { json } = await call(world, "GET", path, { token: org.owner.sessionToken })
      // A charged item's result is the one its hash on the signed receipt covers; a failed item has none.
      const signed = (await call(world, "GET", `/v1/receipts/${id}`, { token: agent.key })).json.receipt
      expect(json.items[0].result).toMatchObject({ email: expect.any(String) })
      expect(json.items.map((i: any) => i.result_hash)).toEqual(signed.items.map((i: any) => i.result_hash))
      expect(json.items[2].result).toBeNull()
      expect(json).not.toHaveProperty("signature")

      const first = await call(world, "GET", `${path}?limit=2`, { token: readKey.secret })
      expect(first.json.items.map((i: any) => i.index)).toEqual([0, 1])
      expect(first.json.has_more).toBe(true)
      const second = await call(world, "GET", `${path}?limit=2&starting_after=1`, { token: readKey.secret })
      expect(second.json.items.map((i: any) => i.index)).toEqual([2])
      expect(second.json.has_more).toBe(false)
      for (const cursor of ["3", "-1", "nope"]) {
        const refused = await call(world, "GET", `${path}?starting_after=${cursor}`, { token: readKey.secret })
        expect(refused.status, cursor).toBe(404)
      }
      expect((await call(world, "GET", `${path}?limit=201`, { token: readKey.secret })).status).toBe(400)

      // Another org: its members see no such receipt, even under their own org's path.
      const stranger = await seedBuyer(world)
      const foreign = await call(world, "GET", `/v1/orgs/${stranger.org.orgId}/receipts/${id}/items`, {
        token: stranger.org.owner.sessionToken
      })
      expect(foreign.status).toBe(404)
      expect(foreign.json.error.code).toBe("not_found")
      expect((await call(world, "GET", path, { token: stranger.org.owner.sessionToken })).status).toBe(404)
      expect(
        (await call(world, "GET", `/v1/orgs/${org.orgId}/receipts/${randomUUID()}/items`, {
          token: org.owner.sessionToken
        })).status
      ).toBe(404)
      // Agent keys read the signed receipt only: an org path does not take them.
      expect((await call(world, "GET", path, { token: agent.key })).status).toBe(401)
      expect((await call(world, "GET", path)).status).toBe(401)
    })
  })

  describe("signed records on the wire", () => {
    it("answers receipts and disputes signed: each verifies with jose against the keys fetched from /.well-known/jwks.json, the agent's and the owner's routes the same receipt", async () => {
      const { agent, org } = await seedBuyer(world)
      const receiptId = await buyMixed(agent.key)
      const signed = (await call(world, "GET", `/v1/receipts/${receiptId}`, { token: agent.key })).json.receipt
      expect(signed.signature).toEqual({
        alg: "EdDSA",
        kid: expect.any(String),
        jws: expect.stringMatching(/^[\w-]+\.\.[\w-]+$/)
      })
      expect(await verifyWithJose(world.server.url, signed)).toBe(signed.signature.kid)
      const byOwner = await call(world, "GET", `/v1/orgs/${org.orgId}/receipts/${receiptId}`, {
        token: org.owner.sessionToken
      })
      expect(byOwner.status).toBe(200)
      expect(byOwner.json.receipt).toEqual(signed)

      const opened = await dispute(agent.key, { receipt_id: receiptId, item_index: 0, reason: "bounced" })
      expect(opened.status).toBe(201)
      expect(await verifyWithJose(world.server.url, opened.json.dispute)).toBe(signed.signature.kid)
      const decided = await decide(opened.json.dispute.id, { decision: "upheld", reason: "Address bounced" })
      expect(decided.status).toBe(200)
      expect(await verifyWithJose(world.server.url, decided.json.dispute)).toBe(signed.signature.kid)
      const refunded = (await call(world, "GET", `/v1/receipts/${receiptId}`, { token: agent.key })).json.receipt
      expect(refunded.items[0].refund.credits).toBe(refunded.items[0].cost.credits)
      expect(await verifyWithJose(world.server.url, refunded)).toBe(signed.signature.kid)
    })
  })

  describe("disputes", () => {
    it("opens a dispute on a charged item; an administrator upholds it and the charge is refunded", async () => {
      const { agent, org } = await seedBuyer(world)
      const receiptId = await buyMixed(agent.key)
      expect(await spentOf(agent.agentId)).toBe("80")
      const opened = await dispute(agent.key, {
        receipt_id: receiptId,
        item_index: 1,
        reason: "catch-all guess, bounced"
      })
      expect(opened.status).toBe(201)
      expect(opened.json.dispute).toMatchObject({
        receipt_id: receiptId,
        item_index: 1,
        status: "open",
        decision: null,
        reason: "catch-all guess, bounced",
        item_cost: { credits: "40" },
        refund: { credits: "0" }
      })
      const id = opened.json.dispute.id
      expect((await call(world, "GET", `/v1/disputes/${id}`, { token: agent.key })).json.dispute.status).toBe("open")
      const listed = await call(world, "GET", "/admin/disputes?status=open", { token: admin.token })
      expect(listed.json.disputes.map((d: any) => d.id)).toContain(id)

      const noReason = await decide(id, { decision: "upheld" })
      expect(noReason.status).toBe(400)
      expect(noReason.json.error).toMatchObject({ code: "reason_required", retryable: false })
      expect((await decide(id, { decision: "upheld", reason: "   " })).json.error.code).toBe("reason_required")

      const upheld = await decide(id, { decision: "upheld", reason: "Address bounced on delivery" })
      expect(upheld.status).toBe(200)
      expect(upheld.json.dispute).toMatchObject({
        status: "upheld",
        decision: "upheld",
        note: "Address bounced on delivery",
        refund: { credits: "40", usd: "0.040" }
      })
      expect(await spentOf(agent.agentId)).toBe("40")
      const receipt = await call(world, "GET", `/v1/receipts/${receiptId}`, { token: agent.key })
      expect(receipt.json.receipt.refunded.credits).toBe("40")
      expect(receipt.json.receipt.items[1].refund.credits).toBe("40")
      expect(await eventsOf(world.db, org.orgId, "dispute.decided")).toEqual([{
        dispute_id: id,
        receipt_id: receiptId,
        item_index: 1,
        decision: "upheld",
        refunded_credits: "40",
        note: "Address bounced on delivery"
      }])
      const twice = await decide(id, { decision: "rejected", reason: "changed my mind" })
      expect(twice.status).toBe(409)
      expect(twice.json.error.code).toBe("conflict")
    })

    it("members dispute from the org's side (session or write key); read keys and other orgs cannot", async () => {
      const { agent, org } = await seedBuyer(world)
      const receiptId = await buyMixed(agent.key)
      const member = await seedUser(world.db)
      await addMember(world.db, org.orgId, member.userId, "member")
      const path = `/v1/orgs/${org.orgId}/disputes`

      const opened = await call(world, "POST", path, {
        token: member.sessionToken,
        body: { receipt_id: receiptId, item_index: 0, reason: "wrong person" }
      })
      expect(opened.status).toBe(201)
      // The dispute is the buying agent's, whoever opened it.
      expect(opened.json.dispute).toMatchObject({ receipt_id: receiptId, item_index: 0, agent_id: agent.agentId })
      const readKey = (await seedOrgKey(world.db, org.orgId, org.owner, "read")).secret
      const writeKey = (await seedOrgKey(world.db, org.orgId, org.owner, "write")).secret
      const byReadKey = await call(world, "POST", path, {
        token: readKey,
        body: { receipt_id: receiptId, item_index: 1 }
      })
      expect(byReadKey.status).toBe(403)
      const byWriteKey = await call(world, "POST", path, {
        token: writeKey,
        body: { receipt_id: receiptId, item_index: 1 }
      })
      expect(byWriteKey.status).toBe(201)
      // The same rules as an agent's: not charged, already disputed.
      const failed = await call(world, "POST", path, {
        token: member.sessionToken,
        body: { receipt_id: receiptId, item_index: 2 }
      })
      expect(failed.json.error.code).toBe("not_disputable")
      const twice = await call(world, "POST", path, {
        token: member.sessionToken,
        body: { receipt_id: receiptId, item_index: 0 }
      })
      expect(twice.json.error.code).toBe("conflict")

      const listed = await call(world, "GET", path, { token: readKey })
      expect(listed.status).toBe(200)
      expect(listed.json.disputes.map((d: any) => d.item_index)).toEqual([0, 1])
      expect((await call(world, "GET", `${path}?status=upheld`, { token: readKey })).json.disputes).toEqual([])
      // Another org sees none of them and cannot dispute this org's receipt.
      const other = await seedBuyer(world)
      const otherPath = `/v1/orgs/${other.org.orgId}/disputes`
      expect((await call(world, "GET", otherPath, { token: other.org.owner.sessionToken })).json.disputes).toEqual([])
      const foreign = await call(world, "POST", otherPath, {
        token: other.org.owner.sessionToken,
        body: { receipt_id: receiptId, item_index: 0 }
      })
      expect(foreign.status).toBe(404)
      const cursorElsewhere = await call(world, "GET", `${otherPath}?starting_after=${opened.json.dispute.id}`, {
        token: other.org.owner.sessionToken
      })
      expect(cursorElsewhere.status).toBe(404)
    })

    it("a rejected dispute refunds nothing", async () => {
      const { agent, org } = await seedBuyer(world)
      const receiptId = await buyMixed(agent.key)
      const opened = await dispute(agent.key, { receipt_id: receiptId, item_index: 0 })
      const rejected = await decide(opened.json.dispute.id, {
        decision: "rejected",
        reason: "The address verified on probe"
      })
      expect(rejected.json.dispute).toMatchObject({ status: "rejected", refund: { credits: "0" } })
      expect(await spentOf(agent.agentId)).toBe("80")
      expect((await eventsOf(world.db, org.orgId, "dispute.decided"))[0]).toMatchObject({
        decision: "rejected",
        refunded_credits: "0"
      })
    })

    it("answers 409 not_disputable for an item that was not charged, and 409 conflict for a second dispute", async () => {
      const { agent } = await seedBuyer(world)
      const receiptId = await buyMixed(agent.key)
      const failed = await dispute(agent.key, { receipt_id: receiptId, item_index: 2 })
      expect(failed.status).toBe(409)
      expect(failed.json.error).toMatchObject({ code: "not_disputable", retryable: false })
      expect((await dispute(agent.key, { receipt_id: receiptId, item_index: 0 })).status).toBe(201)
      const again = await dispute(agent.key, { receipt_id: receiptId, item_index: 0 })
      expect(again.status).toBe(409)
      expect(again.json.error.code).toBe("conflict")
      expect((await dispute(agent.key, { receipt_id: receiptId, item_index: 3 })).status).toBe(404)
      expect((await dispute(agent.key, { receipt_id: randomUUID(), item_index: 0 })).status).toBe(404)
      const stranger = await seedBuyer(world)
      expect((await dispute(stranger.agent.key, { receipt_id: receiptId, item_index: 0 })).status).toBe(404)
    })

    it("a receipt_id that is not a UUID names no receipt (404); one that is not text is a bad body (400)", async () => {
      const { agent, org } = await seedBuyer(world)
      const notFound = {
        code: "not_found",
        message: "No receipt with that id in this org",
        retryable: false
      }
      const openers = [["/v1/disputes", agent.key], [`/v1/orgs/${org.orgId}/disputes`, org.owner.sessionToken]] as const
      for (const [path, token] of openers) {
        const malformed = await call(world, "POST", path, { token, body: { receipt_id: "r-1", item_index: 0 } })
        expect(malformed.status).toBe(404)
        expect(malformed.json.error).toMatchObject(notFound)
        const notText = await call(world, "POST", path, { token, body: { receipt_id: 7, item_index: 0 } })
        expect(notText.status).toBe(400)
        expect(notText.json.error.code).toBe("invalid_input")
      }
    })

    it("opens disputes within 7 days of the purchase and answers 409 dispute_window_closed after", async () => {
      const { agent } = await seedBuyer(world)
      const inside = await buyMixed(agent.key)
      const outside = await buyMixed(agent.key)
      await world.db.query(`UPDATE receipts SET created_at = created_at - interval '6 days 23 hours' WHERE id = $1`, [
        inside
      ])
      await world.db.query(`UPDATE receipts SET created_at = created_at - interval '7 days 1 minute' WHERE id = $1`, [
        outside
      ])
      expect((await dispute(agent.key, { receipt_id: inside, item_index: 0 })).status).toBe(201)
      const closed = await dispute(agent.key, { receipt_id: outside, item_index: 0 })
      expect(closed.status).toBe(409)
      expect(closed.json.error).toMatchObject({ code: "dispute_window_closed", retryable: false })
    })

    it("allows at most 100 open disputes per org (402 plan_limit)", async () => {
      const { agent, org } = await seedBuyer(world)
      const receiptId = await buyMixed(agent.key)
      for (let batch = 0; batch < 4; batch++) {
        const bought = await execute(agent.key, {
          tool: "jina-reader",
          inputs: Array.from({ length: 25 }, (_, i) => ({ url: `https://g${batch}.example.com/${i}` }))
        })
        const opened = await Promise.all(
          Array.from(
            { length: 25 },
            (_, i) => dispute(agent.key, { receipt_id: bought.json.receipt_id, item_index: i })
          )
        )
        expect(opened.every((answer) => answer.status === 201)).toBe(true)
      }
      const limited = await dispute(agent.key, { receipt_id: receiptId, item_index: 0 })
      expect(limited.status).toBe(402)
      expect(limited.json.error).toMatchObject({ code: "plan_limit", retryable: false })
      // The code is the one for plan limits; the message says no plan lifts this one, and what does.
      expect(limited.json.error.message).toContain("whatever its plan")
      expect(limited.json.error.message).toContain("once one of them is decided")
      // Deciding one frees a place.
      const [anyOpen] = await world.db.query(`SELECT id FROM disputes WHERE org_id = $1 AND status = 'open' LIMIT 1`, [
        org.orgId
      ])
      await decide(anyOpen.id, { decision: "rejected", reason: "fine" })
      expect((await dispute(agent.key, { receipt_id: receiptId, item_index: 0 })).status).toBe(201)
      const [{ open }] = await world.db.query(
        `SELECT count(*)::int AS open FROM disputes WHERE org_id = $1 AND status = 'open'`,
        [org.orgId]
      )
      expect(open).toBe(100)
    })

    it("admin endpoints need an administrator's session", async () => {
      const { agent, org } = await seedBuyer(world)
      const receiptId = await buyMixed(agent.key)
      const opened = await dispute(agent.key, { receipt_id: receiptId, item_index: 0 })
      for (const token of [agent.key, org.owner.sessionToken]) {
        const refused = await decide(opened.json.dispute.id, { decision: "upheld", reason: "x" }, token)
        expect([401, 403]).toContain(refused.status)
      }
      expect((await call(world, "GET", "/admin/disputes")).status).toBe(401)
      expect((await decide(randomUUID(), { decision: "upheld", reason: "x" })).status).toBe(404)
    })
  })
})

describe("recommendations", () => {
  const today = () => new Date().toISOString().slice(0, 10)
  const yesterday = () => new Date(Date.now() - 86_400_000).toISOString().slice(0, 10)

  describe("POST /v1/recommend", () => {
    it("ranks the tools of a task type by the published formula, each with purchasable and its score parts", async () => {
      const { agent } = await seedBuyer(world)
      const answer = await call(world, "POST", "/v1/recommend", {
        token: agent.key,
        body: { task_type: "company_enrich" }
      })
      expect(answer.status).toBe(200)
      const scores = await call(world, "GET", "/v1/scores?task_type=company_enrich")
      expect(answer.json.task_type).toBe("company_enrich")
      expect(answer.json.task_match).toBeNull()
      expect(answer.json.formula_version).toBe(scores.json.formula_version)
      expect(answer.json.tools.map((t: any) => [t.slug, t.rank, t.score, t.parts, t.purchasable])).toEqual(
        scores.json.scores.map((s: any) => [s.slug, s.rank, s.score, s.parts, s.purchasable])
      )
      const clearbit = answer.json.tools.find((t: any) => t.slug === "clearbit-company-enrichment")
      expect(clearbit).toMatchObject({ purchasable: false, status: "information_only", price_per_success: null })
      expect(answer.json.tools.find((t: any) => t.slug === "hunter-company-enrichment")).toMatchObject({
        purchasable: true,
        price_per_success: { credits: "25", usd: "0.025" },
        check: { id: "company_enrich.domain_match", version: "1.0.2" }
      })
      expect(answer.json.lookups_today).toMatchObject({
        score_lookups: { used: 1, limit: 1000 },
        free_text_lookups: { used: 0, limit: 100 }
      })
      expect(answer.json.lookups_today.resets_at).toMatch(/T00:00:00\.000Z$/)
    })

    it("maps free text to a task type and says which words led to it", async () => {
      const { agent } = await seedBuyer(world)
      const answer = await call(world, "POST", "/v1/recommend", {
        token: agent.key,
        body: { task: "Verify that these email addresses are deliverable" }
      })
      expect(answer.status).toBe(200)
      expect(answer.json.task_type).toBe("email_verify")
      expect(answer.json.task_match).toEqual({
        method: "keywords",
        matched_words: ["verify", "email", "deliverable"],
        score: 7
      })
      expect(answer.json.lookups_today.score_lookups.used).toBe(1)
      expect(answer.json.lookups_today.free_text_lookups.used).toBe(1)
    })

    it("answers 400 unknown_task_type for a task type outside the seven, or text that maps to none", async () => {
      const { agent } = await seedBuyer(world)
      const unknown = await call(world, "POST", "/v1/recommend", {
        token: agent.key,
        body: { task_type: "dog_walking" }
      })
      expect(unknown.status).toBe(400)
      expect(unknown.json.error).toMatchObject({ code: "unknown_task_type", retryable: false })
      expect(unknown.json.error.doc_url).toMatch(/\/docs\/errors#unknown_task_type$/)
      const text = await call(world, "POST", "/v1/recommend", { token: agent.key, body: { task: "walk my dog twice" } })
      expect(text.status).toBe(400)
      expect(text.json.error.code).toBe("unknown_task_type")
      const both = await call(world, "POST", "/v1/recommend", {
        token: agent.key,
        body: { task_type: "web_search", task: "search" }
      })
      expect(both.status).toBe(400)
      expect(both.json.error.code).toBe("invalid_input")
      const neither = await call(world, "POST", "/v1/recommend", { token: agent.key, body: {} })
      expect(neither.json.error.code).toBe("invalid_input")
      // Refused calls count nothing.
      const ok = await call(world, "POST", "/v1/recommend", { token: agent.key, body: { task_type: "web_search" } })
      expect(ok.json.lookups_today.score_lookups.used).toBe(1)
    })

    it("needs an agent key", async () => {
      const { org } = await seedBuyer(world)
      expect((await call(world, "POST", "/v1/recommend", { body: { task_type: "web_search" } })).status).toBe(401)
      const session = await call(world, "POST", "/v1/recommend", {
        token: org.owner.sessionToken,
        body: { task_type: "web_search" }
      })
      expect(session.status).toBe(401)
    })

    it("answers 429 plan_limit once the plan's daily score lookups are used, and counts per UTC day", async () => {
      const { agent, org } = await seedBuyer(world)
      // Yesterday's use does not count today.
      await world.db.query(
        `INSERT INTO recommend_usage (org_id, day, score_lookups, free_text_lookups) VALUES ($1, $2, 1000, 100)`,
        [org.orgId, yesterday()]
      )
      await world.db.query(
        `INSERT INTO recommend_usage (org_id, day, score_lookups, free_text_lookups) VALUES ($1, $2, 999, 0)`,
        [org.orgId, today()]
      )
      const ask = () => call(world, "POST", "/v1/recommend", { token: agent.key, body: { task_type: "web_search" } })
      const [a, b] = await Promise.all([ask(), ask()])
      expect([a.status, b.status].sort()).toEqual([200, 429])
      const over = a.status === 429 ? a : b
      expect(over.json.error).toMatchObject({ code: "plan_limit", retryable: false })
      expect(over.json.error.message).toMatch(/resets at .*T00:00:00\.000Z/)
      expect(over.json.error.doc_url).toMatch(/#plan_limit$/)
      const [usage] = await world.db.query(`SELECT score_lookups FROM recommend_usage WHERE org_id = $1 AND day = $2`, [
        org.orgId,
        today()
      ])
      expect(usage.score_lookups).toBe(1000)
    })

    it("counts free-text lookups separately: 100 a day on Pay as you go, while task_type still works", async () => {
      const { agent, org } = await seedBuyer(world)
      await world.db.query(
        `INSERT INTO recommend_usage (org_id, day, score_lookups, free_text_lookups) VALUES ($1, $2, 100, 100)`,
        [org.orgId, today()]
      )
      const text = await call(world, "POST", "/v1/recommend", { token: agent.key, body: { task: "search the web" } })
      expect(text.status).toBe(429)
      expect(text.json.error.code).toBe("plan_limit")
      expect(text.json.error.message).toMatch(/free-text lookups \(100\)/)
      const typed = await call(world, "POST", "/v1/recommend", { token: agent.key, body: { task_type: "web_search" } })
      expect(typed.status).toBe(200)
      expect(typed.json.lookups_today.score_lookups.used).toBe(101)
    })

    it("uses each plan's quotas: Pro 10,000 and 500, Max no fixed limit", async () => {
      const pro = await seedBuyer(world, { plan: "pro" })
      await world.db.query(
        `INSERT INTO recommend_usage (org_id, day, score_lookups, free_text_lookups) VALUES ($1, $2, 9999, 499)`,
        [pro.org.orgId, today()]
      )
      const first = await call(world, "POST", "/v1/recommend", { token: pro.agent.key, body: { task: "find email" } })
      expect(first.json.lookups_today).toMatchObject({
        score_lookups: { used: 10000, limit: 10000 },
        free_text_lookups: { used: 500, limit: 500 }
      })
      expect(
        (await call(world, "POST", "/v1/recommend", { token: pro.agent.key, body: { task_type: "web_search" } })).status
      )
        .toBe(429)
      const max = await seedBuyer(world, { plan: "max" })
      await world.db.query(
        `INSERT INTO recommend_usage (org_id, day, score_lookups, free_text_lookups) VALUES ($1, $2, 5000000, 5000000)`,
        [max.org.orgId, today()]
      )
      const unlimited = await call(world, "POST", "/v1/recommend", {
        token: max.agent.key,
        body: { task: "find email" }
      })
      expect(unlimited.status).toBe(200)
      expect(unlimited.json.lookups_today.score_lookups).toEqual({ used: 5000001, limit: null })
    })
  })
})
