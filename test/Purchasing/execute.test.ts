import { Cause, Exit, Option } from "effect"
import { createHash } from "node:crypto"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { ReceiptId } from "../../src/Domain/Ids.js"
import { CheckFailed, UnknownTool } from "../../src/Errors/ApiErrors.js"
import { canonicalJson } from "../../src/Services/Purchasing/Canonical.js"
import { seedAgent } from "../support/fixtures.js"
import { api, type ApiClient, call, startWorld, type World } from "../support/world.js"
import { emailFindInput, seedBuyer } from "./support.js"

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
