import { randomUUID } from "node:crypto"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { bearer, seedAgent, seedOrg, seedOrgKey, seedUser } from "../support/fixtures.js"
import { request } from "../support/server.js"
import { startWorld, topUp, type World } from "../support/world.js"

/**
 * `GET /v1/orgs/{orgId}/usage` against a seeded history: holds written straight into the
 * ledger's tables on chosen days (with the call and item rows they paid for), and one real
 * gateway call made today.
 */
let world: World

beforeAll(async () => {
  world = await startWorld("usage", { provider: true })
})

afterAll(() => world?.close())

interface PastHold {
  readonly orgId: string
  readonly agentId: string
  readonly day: string
  readonly captured: bigint
  readonly refunded?: bigint
  readonly testMode?: boolean
  readonly pays: { readonly endpoint: string } | { readonly toolId: string }
}

/** A settled hold on `day` at noon UTC, with the gateway call or receipt item it paid for. */
const seedHold = async (hold: PastHold) => {
  const at = `${hold.day}T12:00:00.000Z`
  const holdId = randomUUID()
  const reference = randomUUID()
  const amount = hold.captured === 0n ? 10n : hold.captured
  if ("endpoint" in hold.pays) {
    await world.db.query(
      `INSERT INTO gateway_calls (id, org_id, agent_id, endpoint_id, provider_id, mode, status, price_credits,
                                  charged_credits, hold_id, created_at, finished_at)
       VALUES ($1, $2, $3, $4, split_part($4, '/', 1), $5, 'succeeded', $6, $7, $8, $9, $9)`,
      [
        reference,
        hold.orgId,
        hold.agentId,
        hold.pays.endpoint,
        hold.testMode ? "test" : "live",
        amount,
        hold.captured,
        holdId,
        at
      ]
    )
  } else {
    const receiptId = randomUUID()
    await world.db.query(
      `INSERT INTO receipts (id, org_id, agent_id, mode, tool_id, task_type, price_credits, item_count, held_credits,
                             fallback, status, created_at, completed_at)
       SELECT $1, $2, $3, $4, id, task_type, $5, 1, $5, false, 'done', $6, $6 FROM tools WHERE id = $7`,
      [receiptId, hold.orgId, hold.agentId, hold.testMode ? "test" : "live", amount, at, hold.pays.toolId]
    )
    await world.db.query(
      `INSERT INTO receipt_items (id, receipt_id, idx, input, status, hold_id, tool_id, cost_credits, refunded_credits)
       VALUES ($1, $2, 0, '{}', 'passed', $3, $4, $5, $6)`,
      [reference, receiptId, holdId, hold.pays.toolId, hold.captured, hold.refunded ?? 0n]
    )
  }
  await world.db.query(
    `INSERT INTO ledger_holds (id, org_id, agent_id, amount, purpose, reference, test_mode, month, status, captured,
                               refunded, created_at, expires_at, settled_at)
     VALUES ($1, $2, $3, $4, $5, $6, $7, date_trunc('month', $8::timestamptz)::date, $9, $10, $11, $8, $8, $8)`,
    [
      holdId,
      hold.orgId,
      hold.agentId,
      amount,
      "endpoint" in hold.pays ? "gateway_call" : "purchase_item",
      reference,
      hold.testMode ?? false,
      at,
      hold.captured === 0n ? "released" : "captured",
      hold.captured,
      hold.refunded ?? 0n
    ]
  )
}

const usage = (orgId: string, token: string, query = "") =>
  request(`${world.server.url}/v1/orgs/${orgId}/usage${query}`, { headers: bearer(token) })

describe("org balance and usage", () => {
  it("adds up a seeded month per agent, per day, per endpoint and per tool, net of refunds", async () => {
    const org = await seedOrg(world.db)
    const other = await seedOrg(world.db)
    const alpha = await seedAgent(world.db, org.orgId, { mode: "live", name: "alpha" })
    const beta = await seedAgent(world.db, org.orgId, { mode: "live", name: "beta" })
    const stranger = await seedAgent(world.db, other.orgId, { mode: "live" })
    const [tool] = await world.db.query(`SELECT id, slug, name FROM tools ORDER BY slug LIMIT 1`)
    await topUp(world, org.orgId, 5_000n)

    await seedHold({
      orgId: org.orgId,
      agentId: alpha.agentId,
      day: "2026-10-05",
      captured: 100n,
      pays: { endpoint: "fakeprov/ok" }
    })
    await seedHold({
      orgId: org.orgId,
      agentId: alpha.agentId,
      day: "2026-10-05",
      captured: 40n,
      pays: { endpoint: "fakeprov/other" }
    })
    await seedHold({
      orgId: org.orgId,
      agentId: beta.agentId,
      day: "2026-10-06",
      captured: 50n,
      refunded: 20n,
      pays: { toolId: tool.id }
    })
    await seedHold({
      orgId: org.orgId,
      agentId: beta.agentId,
      day: "2026-10-31",
      captured: 7n,
      pays: { endpoint: "fakeprov/ok" }
    })
    // Not counted: test mode, a released hold, another org, outside the range.
    await seedHold({
      orgId: org.orgId,
      agentId: alpha.agentId,
      day: "2026-10-05",
      captured: 999n,
      testMode: true,
      pays: { endpoint: "fakeprov/ok" }
    })
    await seedHold({
      orgId: org.orgId,
      agentId: alpha.agentId,
      day: "2026-10-07",
      captured: 0n,
      pays: { endpoint: "fakeprov/ok" }
    })
    await seedHold({
      orgId: other.orgId,
      agentId: stranger.agentId,
      day: "2026-10-05",
      captured: 500n,
      pays: { endpoint: "fakeprov/ok" }
    })
    await seedHold({
      orgId: org.orgId,
      agentId: alpha.agentId,
      day: "2026-11-01",
      captured: 300n,
      pays: { endpoint: "fakeprov/ok" }
    })
    await seedHold({
      orgId: org.orgId,
      agentId: alpha.agentId,
      day: "2026-09-30",
      captured: 300n,
      pays: { endpoint: "fakeprov/ok" }
    })

    const { json, status } = await usage(org.orgId, org.owner.sessionToken, "?from=2026-10-01&to=2026-10-31")
    expect(status).toBe(200)
    expect(json.range).toEqual({ from: "2026-10-01", to: "2026-10-31" })
    expect(json.balance.credits).toBe("5000")
    expect(json.credits_frozen).toBe(false)
    expect(json.total_spend.credits).toBe("177")
    expect(json.by_agent.map((row: any) => [row.name, row.spend.credits])).toEqual([["alpha", "140"], ["beta", "37"]])
    expect(json.by_day).toHaveLength(31)
    const spendOn = (day: string) => json.by_day.find((row: any) => row.day === day)?.spend.credits
    expect([
      spendOn("2026-10-01"),
      spendOn("2026-10-05"),
      spendOn("2026-10-06"),
      spendOn("2026-10-07"),
      spendOn("2026-10-31")
    ])
      .toEqual(["0", "140", "30", "0", "7"])
    expect(json.top_endpoints.map((row: any) => [row.endpoint, row.calls, row.spend.credits])).toEqual([
      ["fakeprov/ok", 2, "107"],
      ["fakeprov/other", 1, "40"]
    ])
    expect(json.top_tools).toEqual([{
      tool: tool.slug,
      name: tool.name,
      items: 1,
      spend: expect.objectContaining({ credits: "30" })
    }])
    expect(json.by_day.reduce((sum: bigint, row: any) => sum + BigInt(row.spend.credits), 0n)).toBe(177n)
  })

  it("defaults to this month so far and shows a gateway call made just now", async () => {
    const org = await seedOrg(world.db)
    const agent = await seedAgent(world.db, org.orgId, { mode: "live", name: "now" })
    await topUp(world, org.orgId, 1_000n)
    const call = await request(`${world.server.url}/v1/call`, {
      method: "POST",
      headers: bearer(agent.key),
      body: { endpoint: "fakeprov/ok" }
    })
    expect(call.json.status).toBe("succeeded")
    const { json } = await usage(org.orgId, org.owner.sessionToken)
    const today = new Date().toISOString().slice(0, 10)
    expect(json.range).toEqual({ from: `${today.slice(0, 7)}-01`, to: today })
    expect(json.by_day.at(-1)).toMatchObject({ day: today, spend: { credits: call.json.charged.credits } })
    expect(json.top_endpoints).toEqual([
      { endpoint: "fakeprov/ok", calls: 1, spend: expect.objectContaining({ credits: call.json.charged.credits }) }
    ])
    expect(json.balance.credits).toBe(String(1_000n - BigInt(call.json.charged.credits)))
  })

  it("gives every agent's month against its budget, a test agent's priced calls included, as /v1/balance tells the agent", async () => {
    const org = await seedOrg(world.db)
    const tester = await seedAgent(world.db, org.orgId, { mode: "test", name: "tester", monthlyBudgetCredits: 5_000n })
    const idle = await seedAgent(world.db, org.orgId, { mode: "live", name: "idle" })
    let priced = 0n
    for (let i = 0; i < 3; i++) {
      const answer = await request(`${world.server.url}/v1/call`, {
        method: "POST",
        headers: bearer(tester.key),
        body: { endpoint: "fakeprov/ok" }
      })
      expect(answer.json.status).toBe("test")
      priced += BigInt(answer.json.charged.credits)
    }
    expect(priced).toBeGreaterThan(0n)
    const balance = await request(`${world.server.url}/v1/balance`, { headers: bearer(tester.key) })
    expect(balance.json.month_to_date_spend.credits).toBe(String(priced))
    const { json } = await usage(org.orgId, org.owner.sessionToken)
    // Test spend is no spend of credits...
    expect(json.by_agent).toEqual([])
    // ...but it counts against the budget.
    const month = new Date().toISOString().slice(0, 7)
    expect(json.budgets).toEqual(expect.arrayContaining([
      {
        agent_id: tester.agentId,
        month,
        spent: expect.objectContaining({ credits: String(priced) }),
        budget: expect.objectContaining({ credits: "5000" }),
        remaining: expect.objectContaining({ credits: String(5_000n - priced) })
      },
      expect.objectContaining({ agent_id: idle.agentId, spent: expect.objectContaining({ credits: "0" }) })
    ]))
    expect(json.budgets).toHaveLength(2)
  })

  it("is open to members and org keys of the org, and to nobody else", async () => {
    const org = await seedOrg(world.db)
    const readKey = await seedOrgKey(world.db, org.orgId, org.owner, "read")
    expect((await usage(org.orgId, readKey.secret)).status).toBe(200)
    const outsider = await seedUser(world.db)
    expect((await usage(org.orgId, outsider.sessionToken)).status).not.toBe(200)
    const otherOrg = await seedOrg(world.db)
    expect((await usage(otherOrg.orgId, readKey.secret)).status).toBe(403)
  })

  it("names a bad range", async () => {
    const org = await seedOrg(world.db)
    const ask = (query: string) => usage(org.orgId, org.owner.sessionToken, query)
    for (
      const query of [
        "?from=2026-13-01",
        "?to=2026-02-30",
        "?from=yesterday",
        "?from=2026-10-02&to=2026-10-01",
        "?from=2024-01-01&to=2026-01-01"
      ]
    ) {
      const { json, status } = await ask(query)
      expect(status, query).toBe(400)
      expect(json.error.code, query).toBe("invalid_input")
    }
    expect((await ask("?from=2025-11-24&to=2026-11-24")).status).toBe(200)
  })
})
