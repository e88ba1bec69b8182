import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { call, eventually, startWorld, type World } from "../support/world.js"
import { emailFindInput, seedBuyer } from "./support.js"

/** Mock tools take 300 ms a try here, so a request is still running when its twins arrive. */
let world: World
beforeAll(async () => {
  world = await startWorld("pidem", { smtp: true, env: { MOCK_TOOL_LATENCY_MS: "300" } })
})
afterAll(async () => {
  await world?.close()
})

const execute = (key: string, body: unknown) => call(world, "POST", "/v1/execute", { token: key, body })
const receiptsOf = (agentId: string) => world.db.query(`SELECT id FROM receipts WHERE agent_id = $1`, [agentId])
const spentOf = async (agentId: string) =>
  BigInt((await world.db.query(`SELECT spent FROM agent_month_spend WHERE agent_id = $1`, [agentId]))[0]?.spent ?? 0)

describe("idempotency keys", () => {
  it("returns the first answer for the same key and request, and charges once", async () => {
    const { agent } = await seedBuyer(world)
    const body = { tool: "hunter-email-finder", inputs: [emailFindInput(1)], idempotency_key: "order-1" }
    const first = await execute(agent.key, body)
    expect(first.status).toBe(200)
    const again = await execute(agent.key, body)
    expect(again.status).toBe(200)
    expect(again.text).toBe(first.text)
    expect(await receiptsOf(agent.agentId)).toHaveLength(1)
    expect(await spentOf(agent.agentId)).toBe(40n)
  })

  it("answers 409 idempotency_conflict for a different request under the same key", async () => {
    const { agent } = await seedBuyer(world)
    const body = { tool: "hunter-email-finder", inputs: [emailFindInput(1)], idempotency_key: "order-2" }
    expect((await execute(agent.key, body)).status).toBe(200)
    for (
      const changed of [
        { ...body, inputs: [emailFindInput(2)] },
        { ...body, tool: "prospeo-email-finder" },
        { ...body, max_price: 100 },
        { ...body, fallback: true }
      ]
    ) {
      const answer = await execute(agent.key, changed)
      expect(answer.status).toBe(409)
      expect(answer.json.error).toMatchObject({ code: "idempotency_conflict", retryable: false })
    }
    expect(await receiptsOf(agent.agentId)).toHaveLength(1)
  })

  it("keys belong to an agent: another agent's same key is another purchase", async () => {
    const a = await seedBuyer(world)
    const b = await seedBuyer(world)
    const body = { tool: "hunter-email-finder", inputs: [emailFindInput(1)], idempotency_key: "shared" }
    expect((await execute(a.agent.key, body)).status).toBe(200)
    expect((await execute(b.agent.key, body)).status).toBe(200)
    expect(await receiptsOf(b.agent.agentId)).toHaveLength(1)
  })

  it("answers 409 request_in_progress (retryable) while the first request runs", async () => {
    const { agent } = await seedBuyer(world)
    const body = { tool: "hunter-email-finder", inputs: [emailFindInput(1)], idempotency_key: "order-3" }
    const first = execute(agent.key, body)
    // The first holds the key (its row written) before its twin arrives.
    await eventually(
      async () =>
        (await world.db.query(`SELECT 1 FROM idempotency_keys WHERE agent_id = $1 AND key = $2`, [
          agent.agentId,
          "order-3"
        ])).length > 0,
      { what: "the first request's key" }
    )
    const second = await execute(agent.key, body)
    expect(second.status).toBe(409)
    expect(second.json.error).toMatchObject({ code: "request_in_progress", retryable: true })
    expect((await first).status).toBe(200)
    expect((await execute(agent.key, body)).text).toBe((await first).text)
  })

  it("makes exactly one purchase when many clients send the same request at once", async () => {
    const { agent } = await seedBuyer(world)
    const body = {
      tool: "hunter-email-finder",
      inputs: [emailFindInput(1), emailFindInput(2), emailFindInput(3)],
      idempotency_key: "burst"
    }
    const answers = await Promise.all(Array.from({ length: 30 }, () => execute(agent.key, body)))
    const statuses = answers.map((a) => a.status)
    expect(statuses.every((s) => s === 200 || s === 409)).toBe(true)
    expect(answers.filter((a) => a.status === 409).every((a) => a.json.error.code === "request_in_progress")).toBe(true)
    const successes = answers.filter((a) => a.status === 200)
    expect(successes.length).toBeGreaterThanOrEqual(1)
    expect(new Set(successes.map((a) => a.text)).size).toBe(1)
    expect(await receiptsOf(agent.agentId)).toHaveLength(1)
    expect(await spentOf(agent.agentId)).toBe(120n)
    const holds = await world.db.query(`SELECT count(*)::int AS n FROM ledger_holds WHERE agent_id = $1`, [
      agent.agentId
    ])
    expect(holds[0].n).toBe(3)
    // Once it finished, everyone gets the first answer.
    const late = await execute(agent.key, body)
    expect(late.text).toBe(successes[0]!.text)
  })

  it("keeps a check_failed answer and a job's 202 under the key", async () => {
    const { agent } = await seedBuyer(world)
    const failed = { tool: "hunter-email-finder", inputs: [emailFindInput(1, "mock-fail")], idempotency_key: "cf" }
    const first = await execute(agent.key, failed)
    expect(first.json.error.code).toBe("check_failed")
    expect((await execute(agent.key, failed)).text).toBe(first.text)
    const job = {
      tool: "jina-reader",
      inputs: Array.from({ length: 30 }, (_, i) => ({ url: `https://news.example.com/${i}` })),
      idempotency_key: "job"
    }
    const accepted = await execute(agent.key, job)
    expect(accepted.status).toBe(202)
    const replay = await execute(agent.key, job)
    expect(replay.status).toBe(202)
    expect(replay.text).toBe(accepted.text)
    expect(await world.db.query(`SELECT id FROM purchase_jobs WHERE agent_id = $1`, [agent.agentId])).toHaveLength(1)
  })

  it("keeps nothing for a refusal or a provider_error, so a retry under the key runs again", async () => {
    const { agent } = await seedBuyer(world)
    const capped = { tool: "hunter-email-finder", inputs: [emailFindInput(1)], max_price: 10, idempotency_key: "k" }
    expect((await execute(agent.key, capped)).json.error.code).toBe("price_above_max")
    // The key is free again: the same key with a corrected request is a new purchase.
    const fixed = { ...capped, max_price: 40 }
    expect((await execute(agent.key, fixed)).status).toBe(200)
    const down = {
      tool: "hunter-email-finder",
      inputs: [emailFindInput(2, "mock-provider-error")],
      idempotency_key: "p"
    }
    expect((await execute(agent.key, down)).status).toBe(502)
    expect((await execute(agent.key, down)).status).toBe(502)
    expect(await receiptsOf(agent.agentId)).toHaveLength(3)
    expect(await spentOf(agent.agentId)).toBe(40n)
  })

  it("replays a used key even when the request would now be refused or need an approval, asking nothing", async () => {
    // The key is not read before the purchase is checked (Execute.ts): these prove the
    // checks that refuse or ask before the write look at the key first.
    const { agent } = await seedBuyer(world)
    const body = { tool: "hunter-email-finder", inputs: [emailFindInput(1)], idempotency_key: "before-rules" }
    const first = await execute(agent.key, body)
    expect(first.status).toBe(200)
    // approval_id is not part of the request's fingerprint: an unknown one refuses only a new key.
    const unknownApproval = { ...body, approval_id: "7d7a4a52-4f7e-4b59-9d3a-2a8f3c1f0e11" }
    expect((await execute(agent.key, unknownApproval)).text).toBe(first.text)
    expect((await execute(agent.key, { ...unknownApproval, idempotency_key: "fresh-1" })).status).toBe(404)
    // Every purchase now needs an approval: the used key still replays, and none is asked for.
    await world.db.query(`UPDATE agents SET approval_threshold_credits = 1 WHERE id = $1`, [agent.agentId])
    const replayed = await execute(agent.key, body)
    expect(replayed.status).toBe(200)
    expect(replayed.text).toBe(first.text)
    const approvalsOf = () => world.db.query(`SELECT id FROM purchase_approvals WHERE agent_id = $1`, [agent.agentId])
    expect(await approvalsOf()).toHaveLength(0)
    expect((await execute(agent.key, { ...body, idempotency_key: "fresh-2" })).status).toBe(202)
    expect(await approvalsOf()).toHaveLength(1)
    expect(await receiptsOf(agent.agentId)).toHaveLength(1)
  })

  it("keeps keys at least 24 hours", async () => {
    const { agent } = await seedBuyer(world)
    await execute(agent.key, { tool: "hunter-email-finder", inputs: [emailFindInput(1)], idempotency_key: "kept" })
    const [row] = await world.db.query(
      `SELECT extract(epoch FROM expires_at - created_at)::int AS seconds FROM idempotency_keys WHERE agent_id = $1`,
      [agent.agentId]
    )
    expect(row.seconds).toBeGreaterThanOrEqual(24 * 3600)
  })
})
