import { randomUUID } from "node:crypto"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { emailFindInput } from "../Purchasing/support.js"
import { bearer, seedAgent, seedOrg, seedOrgKey, seedUser } from "../support/fixtures.js"
import { request } from "../support/server.js"
import { makeShiftableClock } from "../support/shiftableClock.js"
import { call, eventually, grantTrial, startWorld, topUp, type World } from "../support/world.js"

/**
 * The usage family over HTTP, one service for all of it: `GET /v1/orgs/{orgId}/usage`
 * against a seeded history and real gateway calls; the refusals an owner sees there (each
 * limit, counted per agent, UTC day and code, with trial limits, test activity and live
 * purchases); the exports (`GET /v1/orgs/{orgId}/exports/{dataset}`, CSV and JSON Lines
 * streamed over a range of UTC days); and every refusal the agent API gives reaching the
 * owner, in the usage answer and the usage export alike.
 *
 * The service's clock can be moved forward (a rate-limit burst starts at a window's start),
 * so "today" is the service's day, read from that clock.
 */
let world: World
const clock = makeShiftableClock()

beforeAll(async () => {
  world = await startWorld("usage", { provider: true, clock: clock.layer })
})

afterAll(() => world?.close())

/** The service's day (its clock may have been moved to a rate-limit window's start). */
const today = () => new Date(clock.now()).toISOString().slice(0, 10)

const usage = (orgId: string, token: string, query = "") =>
  request(`${world.server.url}/v1/orgs/${orgId}/usage${query}`, { headers: bearer(token) })
const gatewayCall = (key: string) => call(world, "POST", "/v1/call", { token: key, body: { endpoint: "fakeprov/ok" } })
const execute = (key: string, body: unknown) => call(world, "POST", "/v1/execute", { token: key, body })

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

const download = (orgId: string, token: string, path: string) =>
  fetch(`${world.server.url}/v1/orgs/${orgId}/exports/${path}`, { headers: bearer(token) })

/** A CSV line's cells (quoted cells may hold commas and doubled quotes; no newlines in these rows). */
const cells = (line: string) =>
  Array.from(line.matchAll(/("(?:[^"]|"")*"|[^,]*)(,|$)/g), (m) => m[1]!.replace(/^"|"$/g, "").replace(/""/g, "\""))
    .slice(0, -1)

/** The refusal codes and counts of each agent, as the usage answer lists them. */
const refusalsOf = async (orgId: string, token: string) => {
  const usage = await call(world, "GET", `/v1/orgs/${orgId}/usage`, { token })
  expect(usage.status).toBe(200)
  const byAgent = new Map<string, Record<string, number>>()
  for (const row of usage.json.refusals as Array<{ agent_id: string; code: string; count: number }>) {
    byAgent.set(row.agent_id, { ...byAgent.get(row.agent_id), [row.code]: row.count })
  }
  return byAgent
}

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
    const day = today()
    expect(json.range).toEqual({ from: `${day.slice(0, 7)}-01`, to: day })
    expect(json.by_day.at(-1)).toMatchObject({ day, spend: { credits: call.json.charged.credits } })
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
    const month = today().slice(0, 7)
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

describe("refusals in usage", () => {
  it("counts every refused request per agent, day and code, none lost when they come at once", async () => {
    const org = await seedOrg(world.db)
    const broke = await seedAgent(world.db, org.orgId, { mode: "live", name: "broke" })
    const other = await seedAgent(world.db, org.orgId, { mode: "live", name: "other" })
    // No credits at all: every call is refused before a hold.
    const answers = await Promise.all(Array.from({ length: 40 }, () => gatewayCall(broke.key)))
    expect(answers.every((a) => a.status === 402 && a.json.error.code === "insufficient_credits")).toBe(true)
    const purchase = await request(`${world.server.url}/v1/execute`, {
      method: "POST",
      headers: bearer(other.key),
      body: { tool: "firecrawl-scrape", inputs: [{ url: "https://example.com" }] }
    })
    expect(purchase.json.error.code).toBe("live_execute_unavailable")

    const { json, status } = await usage(org.orgId, org.owner.sessionToken)
    expect(status).toBe(200)
    expect(json.refusals).toHaveLength(2)
    expect(json.refusals).toEqual(expect.arrayContaining([
      expect.objectContaining({
        agent_id: broke.agentId,
        name: "broke",
        day: today(),
        code: "insufficient_credits",
        count: 40,
        last_message: answers[0]!.json.error.message
      }),
      expect.objectContaining({ agent_id: other.agentId, code: "live_execute_unavailable", count: 1 })
    ]))
    expect(json.live_purchases_open).toBe(false)
  })

  it("counts an agent's requests refused by its rate limit", async () => {
    const org = await seedOrg(world.db)
    const agent = await seedAgent(world.db, org.orgId, { mode: "test", name: "hasty" })
    // 600 requests a minute per key: the 601st and later are refused. The burst starts at a
    // minute's start, so the whole minute is before it (a window ending mid-burst would reset the count).
    clock.toNextWindow(60)
    const statuses: Array<number> = []
    for (let batch = 0; batch < 31; batch++) {
      const answers = await Promise.all(
        Array.from({ length: 20 }, () => request(`${world.server.url}/v1/agent`, { headers: bearer(agent.key) }))
      )
      statuses.push(...answers.map((a) => a.status))
    }
    const refused = statuses.filter((s) => s === 429).length
    expect(refused).toBeGreaterThanOrEqual(20)
    const { json } = await usage(org.orgId, org.owner.sessionToken)
    expect(json.refusals).toEqual([expect.objectContaining({ name: "hasty", code: "rate_limited", count: refused })])
  })

  it("leaves out errors that are not limits, and other orgs' refusals", async () => {
    const org = await seedOrg(world.db)
    const agent = await seedAgent(world.db, org.orgId, { mode: "live" })
    const unknown = await request(`${world.server.url}/v1/call`, {
      method: "POST",
      headers: bearer(agent.key),
      body: { endpoint: "fakeprov/no-such-endpoint" }
    })
    expect(unknown.status).toBe(404)
    const stranger = await seedOrg(world.db)
    const theirs = await seedAgent(world.db, stranger.orgId, { mode: "live" })
    expect((await gatewayCall(theirs.key)).status).toBe(402)
    expect((await usage(org.orgId, org.owner.sessionToken)).json.refusals).toEqual([])
  })

  it("shows the trial's hourly limit until the first top-up, then none", async () => {
    const org = await seedOrg(world.db)
    const agent = await seedAgent(world.db, org.orgId, { mode: "live", name: "trial" })
    await grantTrial(world, org.orgId)
    // Calls until the hour's 50 trial credits are spent and the next is refused.
    let refused: { status: number; json: any } | null = null
    for (let i = 0; i < 60 && refused === null; i++) {
      const answer = await gatewayCall(agent.key)
      if (answer.status !== 200) refused = answer
    }
    expect(refused?.json.error.code).toBe("trial_limit")
    const before = (await usage(org.orgId, org.owner.sessionToken)).json
    expect(before.funded).toBe(false)
    expect(before.trial_limit.per_hour.credits).toBe("50")
    expect(Number(before.trial_limit.spent_this_hour.credits)).toBeGreaterThan(0)
    expect(Number(before.trial_limit.spent_this_hour.credits)).toBeLessThanOrEqual(50)
    expect(Date.parse(before.trial_limit.resets_at) % 3_600_000).toBe(0)
    expect(before.refusals).toEqual([expect.objectContaining({ code: "trial_limit", count: 1 })])

    await topUp(world, org.orgId, 10_000n)
    const after = (await usage(org.orgId, org.owner.sessionToken)).json
    expect(after.funded).toBe(true)
    expect(after.trial_limit).toBeNull()
  })

  it("keeps test activity apart from spend", async () => {
    const org = await seedOrg(world.db)
    const tester = await seedAgent(world.db, org.orgId, { mode: "test" })
    const call = await gatewayCall(tester.key)
    expect(call.json.status).toBe("test")
    const { json } = await usage(org.orgId, org.owner.sessionToken)
    expect(json.total_spend.credits).toBe("0")
    expect(json.test_activity).toEqual({
      purchases: 0,
      items: 0,
      calls: 1,
      priced: expect.objectContaining({ credits: call.json.charged.credits })
    })
  })
})

describe("exports", () => {
  it("streams a large range of ledger entries as CSV and as JSON Lines, every row once", async () => {
    const org = await seedOrg(world.db)
    const rows = 60_000
    await world.db.query(
      `INSERT INTO ledger_entries (id, org_id, kind, amount, credits, note, created_at)
       SELECT gen_random_uuid(), $1, 'adjustment', g, g, 'seeded, "quoted"', timestamptz '2026-01-01' + (g % 300) * interval '1 day'
       FROM generate_series(1, $2) AS g`,
      [org.orgId, rows]
    )
    const csv = await download(org.orgId, org.owner.sessionToken, "ledger?from=2026-01-01&to=2026-12-31")
    expect(csv.status).toBe(200)
    expect(csv.headers.get("content-type")).toBe("text/csv; charset=utf-8")
    expect(csv.headers.get("content-length")).toBeNull()
    expect(csv.headers.get("content-disposition")).toBe(
      "attachment; filename=\"ledger-2026-01-01-to-2026-12-31.csv\""
    )
    const lines = (await csv.text()).split("\r\n")
    expect(lines.at(-1)).toBe("")
    expect(lines[0]).toBe("id,seq,created_at,kind,balance_change_credits,credits,agent_id,hold_id,note")
    expect(lines.length - 2).toBe(rows)
    const first = cells(lines[1]!)
    expect(first[3]).toBe("adjustment")
    expect(first[8]).toBe("seeded, \"quoted\"")
    const amounts = new Set(lines.slice(1, -1).map((line) => cells(line)[4]))
    expect(amounts.size).toBe(rows)

    const jsonl = await download(org.orgId, org.owner.sessionToken, "ledger?from=2026-03-01&to=2026-03-31&format=jsonl")
    expect(jsonl.headers.get("content-type")).toBe("application/x-ndjson; charset=utf-8")
    const objects = (await jsonl.text()).trim().split("\n").map((line) => JSON.parse(line))
    expect(objects.length).toBe(31 * 200)
    expect(objects.every((o) => o.created_at >= "2026-03-01" && o.created_at < "2026-04-01")).toBe(true)
    expect(Object.keys(objects[0])).toEqual(
      ["id", "seq", "created_at", "kind", "balance_change_credits", "credits", "agent_id", "hold_id", "note"]
    )
  })

  it("exports receipts with their items' inputs, calls, and usage with refusals", async () => {
    const org = await seedOrg(world.db)
    const agent = await seedAgent(world.db, org.orgId, { mode: "test", name: "=cmd" })
    const bought = await request(`${world.server.url}/v1/execute`, {
      method: "POST",
      headers: bearer(agent.key),
      body: { tool: "hunter-email-finder", inputs: [emailFindInput(1), emailFindInput(2)] }
    })
    expect(bought.status).toBe(200)
    const called = await request(`${world.server.url}/v1/call`, {
      method: "POST",
      headers: bearer(agent.key),
      body: { endpoint: "fakeprov/ok" }
    })
    expect(called.json.status).toBe("test")
    const broke = await seedAgent(world.db, org.orgId, { mode: "live", name: "broke" })
    expect(
      (await request(`${world.server.url}/v1/call`, {
        method: "POST",
        headers: bearer(broke.key),
        body: { endpoint: "fakeprov/ok" }
      })).status
    ).toBe(402)

    const receipts = (await (await download(org.orgId, org.owner.sessionToken, "receipts?format=jsonl")).text())
      .trim().split("\n").map((line) => JSON.parse(line))
    expect(receipts.map((r) => r.item_index)).toEqual([0, 1])
    expect(receipts[0]).toMatchObject({
      receipt_id: bought.json.receipt_id,
      agent_name: "=cmd",
      mode: "test",
      tool: "hunter-email-finder",
      input: emailFindInput(1)
    })

    // A name a spreadsheet would run as a formula is written as text.
    const csv = (await (await download(org.orgId, org.owner.sessionToken, "calls")).text()).split("\r\n")
    // The header and the test call (a refused call leaves no row).
    expect(csv).toHaveLength(3)
    const [header, ...calls] = csv.slice(0, -1).map(cells)
    const named = (row: Array<string>) => Object.fromEntries(header!.map((h, i) => [h, row[i]]))
    expect(calls.map(named)).toEqual(expect.arrayContaining([
      expect.objectContaining({ agent_name: "'=cmd", endpoint: "fakeprov/ok", mode: "test", status: "test" })
    ]))
    // A test row moved no credit: its charge is 0, so a column's sum is what was spent; its price stays.
    const testCall = calls.map(named).find((row) => row["mode"] === "test")!
    expect(testCall["charged_credits"]).toBe("0")
    expect(testCall["price_credits"]).toBe(called.json.charged.credits)
    expect(Number(testCall["price_credits"])).toBeGreaterThan(0)
    expect(receipts.map((r) => r.cost_credits)).toEqual(["0", "0"])

    const usage = (await (await download(org.orgId, org.owner.sessionToken, "usage?format=jsonl")).text())
      .trim().split("\n").map((line) => JSON.parse(line))
    const day = today()
    expect(usage).toEqual(expect.arrayContaining([
      expect.objectContaining({ day, agent_name: "=cmd", spend_credits: "0", items: 2, calls: 1, refusals: 0 }),
      expect.objectContaining({ day, agent_name: "broke", spend_credits: "0", refusals: 1 })
    ]))
  })

  it("refuses a bad range and another org's data before anything is sent", async () => {
    const org = await seedOrg(world.db)
    const bad = await download(org.orgId, org.owner.sessionToken, "calls?from=2026-02-30")
    expect(bad.status).toBe(400)
    expect((await bad.json()).error.code).toBe("invalid_input")
    expect((await download(org.orgId, org.owner.sessionToken, "everything")).status).toBe(400)
    const other = await seedOrg(world.db)
    expect((await download(other.orgId, org.owner.sessionToken, "calls")).status).not.toBe(200)
  })
})

describe("every refusal an agent gets is shown to its owner", () => {
  it("counts the allowlist, a disabled agent, an old key, budget, balance, frozen credits, the gateway off and an expired approval", async () => {
    const org = await seedOrg(world.db)
    const token = org.owner.sessionToken
    const fenced = await seedAgent(world.db, org.orgId, { name: "fenced", ipAllowlist: ["203.0.113.5"] })
    const disabled = await seedAgent(world.db, org.orgId, { name: "disabled", status: "disabled" })
    const rotated = await seedAgent(world.db, org.orgId, { name: "rotated" })
    const revoked = await seedAgent(world.db, org.orgId, { name: "revoked" })
    const thrifty = await seedAgent(world.db, org.orgId, { name: "thrifty", monthlyBudgetCredits: 1n })
    const broke = await seedAgent(world.db, org.orgId, { name: "broke", mode: "live" })
    const asker = await seedAgent(world.db, org.orgId, { name: "asker", approvalThresholdCredits: 100n })

    // Before the key is checked.
    const offList = await call(world, "GET", "/v1/agent", { token: fenced.key })
    expect(offList.json.error.code).toBe("ip_not_allowed")
    expect((await gatewayCall(fenced.key)).status).toBe(403)
    expect((await call(world, "GET", "/v1/agent", { token: disabled.key })).status).toBe(401)
    const rotate = await call(world, "POST", `/v1/orgs/${org.orgId}/agents/${rotated.agentId}/rotate-key`, { token })
    expect(rotate.status).toBe(200)
    expect((await call(world, "GET", "/v1/balance", { token: rotated.key })).status).toBe(401)
    const revoke = await call(world, "POST", `/v1/orgs/${org.orgId}/agents/${revoked.agentId}/revoke-key`, { token })
    expect(revoke.status).toBe(200)
    expect((await gatewayCall(revoked.key)).status).toBe(401)

    // After it: budget, balance, an expired approval.
    expect((await gatewayCall(thrifty.key)).json.error.code).toBe("over_budget")
    expect((await gatewayCall(broke.key)).json.error.code).toBe("insufficient_credits")
    const purchase = { tool: "hunter-email-finder", inputs: [emailFindInput(1), emailFindInput(2), emailFindInput(3)] }
    const asked = await execute(asker.key, purchase)
    expect(asked.status).toBe(202)
    await world.db.query(
      `UPDATE purchase_approvals SET expires_at = expires_at - interval '25 hours' WHERE id = $1`,
      [asked.json.approval.id]
    )
    const late = await execute(asker.key, { ...purchase, approval_id: asked.json.approval.id })
    expect(late.json.error.code).toBe("approval_expired")

    // Frozen credits, then the gateway switched off.
    await topUp(world, org.orgId, 10_000n)
    await world.db.query(`UPDATE org_balances SET frozen = true WHERE org_id = $1`, [org.orgId])
    expect((await gatewayCall(broke.key)).json.error.code).toBe("credits_frozen")
    await world.db.query(
      `INSERT INTO runtime_settings (name, value, updated_at) VALUES ('gateway_enabled', 'false'::jsonb, now())
       ON CONFLICT (name) DO UPDATE SET value = excluded.value`
    )
    // Until the switch reaches the gateway (its cache keeps it a second), calls are refused as frozen.
    let frozen = 1
    const off = await eventually(async () => {
      const answer = await gatewayCall(broke.key)
      if (answer.json.error?.code === "credits_frozen") frozen++
      return answer.status === 503 && answer
    }, { what: "the gateway switched off" })
    expect(off.json.error.code).toBe("endpoint_unavailable")
    await world.db.query(`DELETE FROM runtime_settings WHERE name = 'gateway_enabled'`)

    const refusals = await refusalsOf(org.orgId, token)
    expect(Object.fromEntries([...refusals].map(([id, codes]) => [id, codes]))).toEqual({
      [fenced.agentId]: { ip_not_allowed: 2 },
      [disabled.agentId]: { unauthenticated: 1 },
      [rotated.agentId]: { unauthenticated: 1 },
      [revoked.agentId]: { unauthenticated: 1 },
      [thrifty.agentId]: { over_budget: 1 },
      [broke.agentId]: { insufficient_credits: 1, credits_frozen: frozen, endpoint_unavailable: 1 },
      [asker.agentId]: { approval_expired: 1 }
    })

    // The usage export counts the same refusals per agent and day.
    const exported = await call(world, "GET", `/v1/orgs/${org.orgId}/exports/usage?format=jsonl`, { token })
    expect(exported.status).toBe(200)
    const rows = exported.text.trim().split("\n").map((line) => JSON.parse(line))
    const exportedRefusals = (agentId: string) =>
      rows.filter((row) => row.agent_id === agentId).reduce((sum, row) => sum + Number(row.refusals), 0)
    expect(exportedRefusals(fenced.agentId)).toBe(2)
    expect(exportedRefusals(revoked.agentId)).toBe(1)
    expect(exportedRefusals(broke.agentId)).toBe(frozen + 2)
  })

  it("counts an agent's refusals on /mcp, and nothing for a key no agent ever had", async () => {
    const org = await seedOrg(world.db)
    const fenced = await seedAgent(world.db, org.orgId, { name: "mcp fenced", ipAllowlist: ["203.0.113.5"] })
    const disabled = await seedAgent(world.db, org.orgId, { name: "mcp disabled", status: "disabled" })
    const initialize = {
      jsonrpc: "2.0",
      id: 1,
      method: "initialize",
      params: { protocolVersion: "2025-06-18", capabilities: {}, clientInfo: { name: "test", version: "1" } }
    }
    const mcp = (key: string) =>
      call(world, "POST", "/mcp", {
        token: key,
        body: initialize,
        headers: { accept: "application/json, text/event-stream" }
      })
    expect((await mcp(fenced.key)).status).toBe(403)
    expect((await mcp(disabled.key)).status).toBe(401)
    expect((await mcp(`sk_test_${"x".repeat(40)}`)).status).toBe(401)
    const refusals = await refusalsOf(org.orgId, org.owner.sessionToken)
    expect(refusals.get(fenced.agentId)).toEqual({ ip_not_allowed: 1 })
    expect(refusals.get(disabled.agentId)).toEqual({ unauthenticated: 1 })
    expect(refusals.size).toBe(2)
  })
})
