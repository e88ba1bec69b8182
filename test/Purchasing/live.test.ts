import { Effect } from "effect"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { Ledger } from "../../src/Services/Ledger/Ledger.js"
import { startFakeToolProvider } from "../support/fakeToolProvider.js"
import { seedAgent, seedOrg } from "../support/fixtures.js"
import { seedAdmin } from "../support/fixtures.js"
import { call, eventually, grantTrial, startWorld, topUp, type World } from "../support/world.js"
import { emailFindInput } from "./support.js"

/**
 * Live purchases switched on against the fake tool provider on loopback: the same forwarder
 * as the gateway, the provider's credential, real holds on the org's credits.
 */
let world: World
let fake: Awaited<ReturnType<typeof startFakeToolProvider>>
beforeAll(async () => {
  fake = await startFakeToolProvider()
  world = await startWorld("plive", {
    smtp: true,
    env: {
      LIVE_EXECUTE_ENABLED: "true",
      PROVIDERS_UPSTREAM: fake.url,
      // Long enough for a loaded machine to answer every call that should succeed; only the
      // hanging provider waits it out (twice: one retry).
      GATEWAY_TIMEOUT_MS: "5000",
      PROVIDER_HUNTER_API_KEY: "hunter-secret",
      PROVIDER_FIRECRAWL_API_KEY: "fc-secret"
    }
  })
})
afterAll(async () => {
  await world?.close()
  await fake?.close()
})

const execute = (key: string, body: unknown) => call(world, "POST", "/v1/execute", { token: key, body })

/** The org's balance, and the money invariants of its ledger. */
const money = async (orgId: string) => {
  const [balance] = await world.db.query(`SELECT balance FROM org_balances WHERE org_id = $1`, [orgId])
  const [sum] = await world.db.query(
    `SELECT COALESCE(SUM(amount), 0)::text AS sum FROM ledger_entries WHERE org_id = $1`,
    [orgId]
  )
  const [open] = await world.db.query(
    `SELECT count(*)::int AS n FROM ledger_holds WHERE org_id = $1 AND status = 'held'`,
    [orgId]
  )
  expect(sum.sum).toBe(balance.balance)
  return { balance: BigInt(balance.balance), openHolds: open.n as number }
}

const liveBuyer = async (credits: bigint) => {
  const org = await seedOrg(world.db)
  await topUp(world, org.orgId, credits)
  const agent = await seedAgent(world.db, org.orgId, {
    mode: "live",
    approvalThresholdCredits: null,
    monthlyBudgetCredits: 1_000_000n
  })
  return { org, agent }
}

describe("live purchases (LIVE_EXECUTE_ENABLED=true)", () => {
  it("calls the provider through the forwarder with its credential and charges passed items from the org's credits", async () => {
    const { agent, org } = await liveBuyer(10_000n)
    const before = fake.seen.length
    const answer = await execute(agent.key, {
      tool: "hunter-email-finder",
      inputs: [emailFindInput(1), emailFindInput(2, "mock-partial"), emailFindInput(3, "mock-fail")]
    })
    expect(answer.status).toBe(200)
    expect(answer.json.mode).toBe("live")
    expect(answer.json.items.map((i: any) => [i.outcome, i.cost.credits])).toEqual([
      ["passed", "40"],
      ["partial", "40"],
      ["failed", "0"]
    ])
    expect(answer.json.items[0].result.email).toBe("jane1.doe@acme1.example.com")
    const calls = fake.seen.slice(before)
    expect(calls).toHaveLength(3)
    for (const seen of calls) {
      const url = new URL(seen.url, "http://fake")
      expect(seen.method).toBe("GET")
      expect(url.pathname).toBe("/hunter/v2/email-finder")
      expect(url.searchParams.get("api_key")).toBe("hunter-secret")
      expect(url.searchParams.get("last_name")).toBe("Doe")
    }
    expect(await money(org.orgId)).toEqual({ balance: 10_000n - 80n, openHolds: 0 })
    const receipt = await call(world, "GET", `/v1/receipts/${answer.json.receipt_id}`, { token: agent.key })
    expect(receipt.json.receipt).toMatchObject({ mode: "live", charged: { credits: "80" } })
  })

  it("counts live purchase calls against the provider's daily cap: a call over it is not made", async () => {
    const { agent, org } = await liveBuyer(10_000n)
    const [endpoint] = await world.db.query(
      `SELECT e.provider_id, p.daily_call_cap FROM tools t JOIN catalogue_endpoints e ON e.id = t.gateway_endpoint
       JOIN providers p ON p.id = e.provider_id WHERE t.slug = 'hunter-email-finder'`
    )
    await world.db.query(`UPDATE providers SET daily_call_cap = 2 WHERE id = $1`, [endpoint.provider_id])
    try {
      const before = fake.seen.length
      const answer = await execute(agent.key, {
        tool: "hunter-email-finder",
        inputs: [emailFindInput(11), emailFindInput(12), emailFindInput(13)]
      })
      expect(answer.status).toBe(200)
      expect(answer.json.items.map((i: any) => i.outcome).sort()).toEqual(["failed", "passed", "passed"])
      // Two calls made; the third, over the cap, never left (its retry neither).
      expect(fake.seen.length - before).toBe(2)
      const [counted] = await world.db.query(
        `SELECT calls FROM provider_daily_calls WHERE org_id = $1 AND provider_id = $2`,
        [org.orgId, endpoint.provider_id]
      )
      expect(counted.calls).toBe(2)
      expect(await money(org.orgId)).toEqual({ balance: 10_000n - 80n, openHolds: 0 })
    } finally {
      await world.db.query(`UPDATE providers SET daily_call_cap = $2 WHERE id = $1`, [
        endpoint.provider_id,
        endpoint.daily_call_cap
      ])
    }
  })

  it("sends the input as the JSON body to POST endpoints", async () => {
    const { agent, org } = await liveBuyer(1_000n)
    const before = fake.seen.length
    const answer = await execute(agent.key, {
      tool: "firecrawl-scrape",
      inputs: [{ url: "https://news.example.com/a" }]
    })
    expect(answer.status).toBe(200)
    const [seen] = fake.seen.slice(before)
    expect(seen!.method).toBe("POST")
    expect(JSON.parse(seen!.body)).toEqual({ url: "https://news.example.com/a" })
    expect(await money(org.orgId)).toEqual({ balance: 995n, openHolds: 0 })
  })

  it("releases the hold when the provider fails after one retry, times out or finds nothing", async () => {
    const { agent, org } = await liveBuyer(1_000n)
    const before = fake.seen.length
    const down = await execute(agent.key, { tool: "hunter-email-finder", inputs: [emailFindInput(1, "live-down")] })
    expect(down.status).toBe(502)
    expect(down.json.error.code).toBe("provider_error")
    expect(fake.seen.length - before).toBe(2)
    const hang = await execute(agent.key, { tool: "hunter-email-finder", inputs: [emailFindInput(2, "live-hang")] })
    expect(hang.status).toBe(502)
    expect(hang.json.error.message).toMatch(/did not answer within/)
    const refused = await execute(agent.key, {
      tool: "hunter-email-finder",
      inputs: [emailFindInput(3, "live-refuse")]
    })
    expect(refused.status).toBe(200)
    expect(refused.json.error.code).toBe("check_failed")
    expect(refused.json.reason).toBe("hunter found no result (HTTP 404)")
    const flaky = await execute(agent.key, { tool: "hunter-email-finder", inputs: [emailFindInput(4, "live-flaky")] })
    expect(flaky.status).toBe(200)
    expect(flaky.json.items[0].outcome).toBe("passed")
    expect(await money(org.orgId)).toEqual({ balance: 960n, openHolds: 0 })
  })

  it("answers 402 insufficient_credits and 403 credits_frozen before anything runs", async () => {
    const { agent, org } = await liveBuyer(50n)
    const before = fake.seen.length
    const poor = await execute(agent.key, {
      tool: "hunter-email-finder",
      inputs: [emailFindInput(1), emailFindInput(2)]
    })
    expect(poor.status).toBe(402)
    expect(poor.json.error.code).toBe("insufficient_credits")
    await world.ledger.runPromise(Effect.flatMap(Ledger, (ledger) => ledger.setFrozen(org.orgId, true)))
    const frozen = await execute(agent.key, { tool: "hunter-email-finder", inputs: [emailFindInput(1)] })
    expect(frozen.status).toBe(403)
    expect(frozen.json.error.code).toBe("credits_frozen")
    // The approval rule comes first: past the month's budget (40 credits on 20 spent of 50), a
    // frozen org's agent asks its owners.
    await world.db.query(`UPDATE agents SET monthly_budget_credits = 50 WHERE id = $1`, [agent.agentId])
    await world.db.query(
      `INSERT INTO agent_month_spend (agent_id, month, org_id, spent, held)
       VALUES ($1, date_trunc('month', now())::date, $2, 0, 0) ON CONFLICT DO NOTHING`,
      [agent.agentId, org.orgId]
    )
    await world.db.query(`UPDATE agent_month_spend SET spent = 20 WHERE agent_id = $1`, [agent.agentId])
    const pastBudget = await execute(agent.key, { tool: "hunter-email-finder", inputs: [emailFindInput(1)] })
    expect(pastBudget.status).toBe(202)
    expect(pastBudget.json.approval.reason).toBe("over_budget")
    expect(fake.seen.length).toBe(before)
    expect(await world.db.query(`SELECT 1 FROM receipts WHERE org_id = $1`, [org.orgId])).toHaveLength(0)
    expect(await money(org.orgId)).toEqual({ balance: 50n, openHolds: 0 })
  })

  it("answers 429 trial_limit to an unfunded org past 50 trial credits an hour", async () => {
    const org = await seedOrg(world.db)
    await grantTrial(world, org.orgId)
    const agent = await seedAgent(world.db, org.orgId, { mode: "live", approvalThresholdCredits: null })
    const first = await execute(agent.key, { tool: "hunter-email-finder", inputs: [emailFindInput(1)] })
    expect(first.status).toBe(200)
    const second = await execute(agent.key, { tool: "hunter-email-finder", inputs: [emailFindInput(2)] })
    expect(second.status).toBe(429)
    expect(second.json.error).toMatchObject({ code: "trial_limit", retryable: true })
    expect(await money(org.orgId)).toEqual({ balance: 5_000n - 40n, openHolds: 0 })
  })

  it("refunds the org's credits when a dispute on a live item is upheld", async () => {
    const { agent, org } = await liveBuyer(1_000n)
    const answer = await execute(agent.key, {
      tool: "hunter-email-finder",
      inputs: [emailFindInput(1), emailFindInput(2)]
    })
    expect(await money(org.orgId)).toEqual({ balance: 920n, openHolds: 0 })
    const opened = await call(world, "POST", "/v1/disputes", {
      token: agent.key,
      body: { receipt_id: answer.json.receipt_id, item_index: 1, reason: "bounced" }
    })
    const admin = await seedAdmin(world.db)
    const upheld = await call(world, "POST", `/admin/disputes/${opened.json.dispute.id}/decide`, {
      token: admin.token,
      body: { decision: "upheld", reason: "Bounced on delivery" }
    })
    expect(upheld.json.dispute.refund.credits).toBe("40")
    expect(await money(org.orgId)).toEqual({ balance: 960n, openHolds: 0 })
    const entries = await world.db.query(
      `SELECT kind, amount FROM ledger_entries WHERE org_id = $1 AND kind = 'refund'`,
      [
        org.orgId
      ]
    )
    expect(entries).toEqual([{ kind: "refund", amount: "40" }])
  })

  it("runs live jobs with a hold per item", async () => {
    const { agent, org } = await liveBuyer(10_000n)
    const accepted = await execute(agent.key, {
      tool: "firecrawl-scrape",
      inputs: Array.from(
        { length: 40 },
        (_, i) => ({ url: i === 5 ? "https://mock-fail.example.com/x" : `https://a.example.com/${i}` })
      )
    })
    expect(accepted.status).toBe(202)
    // Every item is held at once.
    expect((await money(org.orgId)).balance).toBe(10_000n - 200n)
    const job = await eventually(async () => {
      const current = (await call(world, "GET", `/v1/jobs/${accepted.json.job_id}`, { token: agent.key })).json.job
      return current.status === "done" && current
    }, { timeoutMs: 60_000 })
    expect(job.counts).toMatchObject({ passed: 39, failed: 1 })
    expect(await money(org.orgId)).toEqual({ balance: 10_000n - 195n, openHolds: 0 })
  })
})
