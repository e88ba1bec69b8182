import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { gatewayPrice } from "../../src/Domain/Plans.js"
import { verifyWithJose } from "../Receipts/support.js"
import { bearer, seedAgent, seedOrg, seedOrgKey } from "../support/fixtures.js"
import { invariants } from "../support/ledgerChecks.js"
import { expectError } from "../support/people.js"
import { request } from "../support/server.js"
import { grantTrial, startWorld, topUp, type World } from "../support/world.js"

let world: World

beforeAll(async () => {
  world = await startWorld("gateway", {
    provider: true,
    env: {
      PROVIDER_FAKEPROV_API_KEY: "fake-secret-123",
      PROVIDER_FAKEBODY_API_KEY: "body-secret-456"
    }
  })
})

afterAll(() => world?.close())

const call = (key: string, body: unknown) =>
  request(`${world.server.url}/v1/call`, { method: "POST", headers: bearer(key), body })

/** A funded org (top-up done, so no trial limit) with a live agent. */
const liveSetup = async (credits = 10_000n, budget = 50_000n) => {
  const org = await seedOrg(world.db)
  await topUp(world, org.orgId, credits)
  const agent = await seedAgent(world.db, org.orgId, { mode: "live", monthlyBudgetCredits: budget })
  return { org, agent }
}

const balanceOf = async (orgId: string) =>
  BigInt((await world.db.query(`SELECT balance FROM org_balances WHERE org_id = $1`, [orgId]))[0]?.balance ?? 0)

describe("POST /v1/call (live)", () => {
  it("holds the price, forwards the call and captures it when the provider answers", async () => {
    const { agent, org } = await liveSetup()
    const { json, status } = await call(agent.key, { endpoint: "fakeprov/ok", query: { q: "x" } })
    expect(status).toBe(200)
    expect(json).toMatchObject({
      endpoint: "fakeprov/ok",
      provider: "fakeprov",
      status: "succeeded",
      charged: { credits: "10", usd: "0.010" },
      data: { ok: true, answer: 42 }
    })
    expect(json.refunded).toBeUndefined()
    expect(json.call_id).toMatch(/^[0-9a-f-]{36}$/)
    expect(Number.isInteger(json.latency_ms)).toBe(true)
    expect(await balanceOf(org.orgId)).toBe(9_990n)
    const inv = await invariants(world.db, org.orgId)
    expect(inv.entriesSum).toBe(inv.balance)
    expect(inv.openHolds).toBe(0)
  })

  it("passes the provider's own parameters: path placeholders encoded, query and body, credential injected", async () => {
    const { agent } = await liveSetup()
    const before = world.fake.seen.length
    const item = await call(agent.key, {
      endpoint: "fakeprov/item",
      path_params: { item_id: "a b/c?d", part: 7 },
      query: { tags: ["x", "y"], n: 3 }
    })
    expect(item.status).toBe(200)
    const seen = world.fake.seen[before]!
    expect(seen.url).toBe("/fakeprov/v1/items/a%20b%2Fc%3Fd/7?tags=x&tags=y&n=3")
    expect(seen.headers["x-api-key"]).toBe("Key fake-secret-123")

    const echo = await call(agent.key, { endpoint: "fakeprov/echo", body: { name: "Ada", nested: { n: 1 } } })
    expect(echo.json.data).toMatchObject({ method: "POST", body: { name: "Ada", nested: { n: 1 } } })
    expect(world.fake.seen.at(-1)!.headers["content-type"]).toBe("application/json")

    const bodyCost = await call(agent.key, { endpoint: "fakebody/lookup" })
    expect(new URL(world.fake.seen.at(-1)!.url, "http://x").searchParams.get("api_key")).toBe("body-secret-456")
    // The provider reported 3 credits in its body: 3 captured, 7 released.
    expect(bodyCost.json.charged.credits).toBe("3")
    expect(bodyCost.json.refunded).toEqual({ credits: "7", usd: "0.007", reason: "lower_cost_reported" })
  })

  it("captures a lower reported cost and releases the rest", async () => {
    const { agent, org } = await liveSetup()
    const { json } = await call(agent.key, { endpoint: "fakeprov/cost" })
    expect(json.status).toBe("succeeded")
    expect(json.charged).toEqual({ credits: "4", usd: "0.004" })
    expect(json.refunded).toEqual({ credits: "6", usd: "0.006", reason: "lower_cost_reported" })
    expect(await balanceOf(org.orgId)).toBe(9_996n)
  })

  it("charges an empty but successful answer", async () => {
    const { agent, org } = await liveSetup()
    const { json } = await call(agent.key, { endpoint: "fakeprov/empty" })
    expect(json).toMatchObject({ status: "succeeded", charged: { credits: "10" }, data: null, provider_status: 204 })
    expect(await balanceOf(org.orgId)).toBe(9_990n)
  })

  it.each([
    ["fakeprov/fail", "failed", "provider_error", 500],
    ["fakeprov/refuse", "refused", "provider_refused", 404],
    ["fakeprov/hang", "timed_out", "timeout", null],
    // Headers at once, the body never finished: the deadline covers the whole answer.
    ["fakeprov/trickle", "timed_out", "timeout", null],
    ["fakeprov/drop", "failed", "provider_error", null]
  ])("releases the hold when the provider %s: status %s", async (endpoint, status, reason, providerStatus) => {
    const { agent, org } = await liveSetup()
    const { json } = await call(agent.key, { endpoint })
    expect(json).toMatchObject({
      status,
      charged: { credits: "0", usd: "0.000" },
      refunded: { credits: "10", usd: "0.010", reason },
      provider_status: providerStatus
    })
    expect(await balanceOf(org.orgId)).toBe(10_000n)
    const inv = await invariants(world.db, org.orgId)
    expect(inv.entriesSum).toBe(inv.balance)
    expect(inv.openHolds).toBe(0)
    // Nothing charged means nothing counted toward the budget either.
    const spend = await request(`${world.server.url}/v1/balance`, { headers: bearer(agent.key) })
    expect(spend.json.month_to_date_spend.credits).toBe("0")
  })

  it("answers the spec's errors, holding nothing", async () => {
    const { agent, org } = await liveSetup(15n, 50_000n)
    const expectError = async (body: unknown, status: number, code: string) => {
      const response = await call(agent.key, body)
      expect(response.status).toBe(status)
      expect(response.json.error.code).toBe(code)
      expect(response.json.error.doc_url).toContain(`/docs/errors#${code}`)
    }
    await expectError({ endpoint: "fakeprov/item", path_params: { item_id: "1" } }, 400, "invalid_input")
    await expectError({ endpoint: "fakeprov/ok", query: [1, 2] }, 400, "invalid_input")
    await expectError({ endpoint: "fakeprov/echo", body: "text" }, 400, "invalid_input")
    await expectError({ endpoint: "fakeprov/echo", body: null }, 400, "invalid_input")
    await expectError({ query: {} }, 400, "invalid_input")
    await expectError({ endpoint: "nobody/nothing" }, 404, "unknown_endpoint")
    await expectError({ endpoint: "fakeprov/inbox" }, 409, "endpoint_on_request")
    await expectError({ endpoint: "fakeprov/ok", max_price: 9 }, 402, "price_above_max")
    await expectError({ endpoint: "fakeprov/dear" }, 402, "insufficient_credits")
    expect(await balanceOf(org.orgId)).toBe(15n)
    const holds = await world.db.query(
      `SELECT count(*)::int AS n FROM ledger_holds WHERE org_id = $1 AND (NOT refused OR status = 'held')`,
      [org.orgId]
    )
    expect(holds[0].n).toBe(0)
    // A price at max_price passes.
    expect((await call(agent.key, { endpoint: "fakeprov/ok", max_price: 10 })).json.status).toBe("succeeded")
  })

  it("refuses a call past the agent's monthly budget with over_budget", async () => {
    const { agent } = await liveSetup(10_000n, 25n)
    expect((await call(agent.key, { endpoint: "fakeprov/ok" })).json.status).toBe("succeeded")
    expect((await call(agent.key, { endpoint: "fakeprov/ok" })).json.status).toBe("succeeded")
    const third = await call(agent.key, { endpoint: "fakeprov/ok" })
    expect(third.status).toBe(402)
    expect(third.json.error.code).toBe("over_budget")
    const balance = await request(`${world.server.url}/v1/balance`, { headers: bearer(agent.key) })
    expect(balance.json).toMatchObject({
      month_to_date_spend: { credits: "20", usd: "0.020" },
      monthly_budget: { credits: "25", usd: "0.025" },
      budget_remaining: { credits: "5" },
      org_credits: { credits: "9980", usd: "9.980" },
      credits_frozen: false
    })
    expect(balance.json.month).toMatch(/^\d{4}-\d{2}$/)
  })

  it("answers credits_frozen for purchases while reads still work", async () => {
    const { agent, org } = await liveSetup()
    await world.db.query(`UPDATE org_balances SET frozen = true WHERE org_id = $1`, [org.orgId])
    const refused = await call(agent.key, { endpoint: "fakeprov/ok" })
    expect(refused.status).toBe(403)
    expect(refused.json.error.code).toBe("credits_frozen")
    const balance = await request(`${world.server.url}/v1/balance`, { headers: bearer(agent.key) })
    expect(balance.status).toBe(200)
    expect(balance.json.credits_frozen).toBe(true)
  })

  it("limits an unfunded org to 50 trial credits an hour (429 trial_limit, retryable)", async () => {
    const org = await seedOrg(world.db)
    await grantTrial(world, org.orgId)
    const agent = await seedAgent(world.db, org.orgId, { mode: "live" })
    for (let i = 0; i < 5; i++) {
      expect((await call(agent.key, { endpoint: "fakeprov/ok" })).json.status).toBe("succeeded")
    }
    const sixth = await call(agent.key, { endpoint: "fakeprov/ok" })
    expect(sixth.status).toBe(429)
    expect(sixth.json.error).toMatchObject({ code: "trial_limit", retryable: true })
    // A failed call gives its credits back to the hour's allowance too.
    await topUp(world, org.orgId, 1_000n)
    expect((await call(agent.key, { endpoint: "fakeprov/ok" })).json.status).toBe("succeeded")
    const inv = await invariants(world.db, org.orgId)
    expect(inv.balance).toBe(5_000n + 1_000n - 60n)
    expect(inv.entriesSum).toBe(inv.balance)
  })

  it("caps calls per provider per org per day (429 provider_quota)", async () => {
    const { agent } = await liveSetup()
    for (let i = 0; i < 3; i++) expect((await call(agent.key, { endpoint: "capped/ok" })).status).toBe(200)
    const fourth = await call(agent.key, { endpoint: "capped/ok" })
    expect(fourth.status).toBe(429)
    expect(fourth.json.error).toMatchObject({ code: "provider_quota", retryable: true })
    // Another org has its own count.
    const other = await liveSetup()
    expect((await call(other.agent.key, { endpoint: "capped/ok" })).status).toBe(200)
  })

  it("counts only calls that go ahead: a refused hold or people lookup gives its counts back", async () => {
    const counts = async (orgId: string) =>
      (await world.db.query(
        `SELECT (SELECT COALESCE(sum(calls), 0)::int FROM provider_daily_calls WHERE org_id = $1) AS calls,
                (SELECT COALESCE(sum(lookups), 0)::int FROM people_lookups_daily WHERE org_id = $1) AS lookups,
                (SELECT count(*)::int FROM gateway_calls WHERE org_id = $1) AS rows`,
        [orgId]
      ))[0]
    // The budget refuses the third call: its provider count and call row are not kept.
    const { agent, org } = await liveSetup(10_000n, 25n)
    for (let i = 0; i < 2; i++) expect((await call(agent.key, { endpoint: "capped/ok" })).status).toBe(200)
    expect((await call(agent.key, { endpoint: "capped/ok" })).json.error.code).toBe("over_budget")
    expect(await counts(org.orgId)).toEqual({ calls: 2, lookups: 0, rows: 2 })
    // The balance refuses a people lookup: neither count is kept.
    const poor = await liveSetup(5n, 50_000n)
    const refused = await call(poor.agent.key, { endpoint: "fakeprov/people", query: { domain: "acme.com" } })
    expect(refused.json.error.code).toBe("insufficient_credits")
    expect(await counts(poor.org.orgId)).toEqual({ calls: 0, lookups: 0, rows: 0 })
    // The people-lookup limit refuses: the provider's count taken before it is given back.
    const busy = await liveSetup(100_000n, 100_000n)
    await world.db.query(
      `INSERT INTO people_lookups_daily (org_id, domain, day, lookups) VALUES ($1, 'acme.com', (now() AT TIME ZONE 'UTC')::date, 500)`,
      [busy.org.orgId]
    )
    const over = await call(busy.agent.key, { endpoint: "fakeprov/people", query: { domain: "acme.com" } })
    expect(over.json.error.code).toBe("aup_limit")
    expect(await counts(busy.org.orgId)).toEqual({ calls: 0, lookups: 500, rows: 0 })
    const inv = await invariants(world.db, busy.org.orgId)
    expect(inv.openHolds).toBe(0)
  })

  it("allows at most 500 people lookups per company domain per org per day (429 aup_limit)", async () => {
    const { agent, org } = await liveSetup(100_000n, 100_000n)
    await world.db.query(
      `INSERT INTO people_lookups_daily (org_id, domain, day, lookups) VALUES ($1, 'acme.com', (now() AT TIME ZONE 'UTC')::date, 499)`,
      [org.orgId]
    )
    expect(
      (await call(agent.key, { endpoint: "fakeprov/people", query: { domain: "https://www.ACME.com/about" } })).status
    )
      .toBe(200)
    const over = await call(agent.key, { endpoint: "fakeprov/people", query: { domain: "acme.com" } })
    expect(over.status).toBe(429)
    expect(over.json.error).toMatchObject({ code: "aup_limit", retryable: false })
    expect((await call(agent.key, { endpoint: "fakeprov/people", query: { domain: "other.org" } })).status).toBe(200)
  })

  it("lists the org's calls with endpoint, status, charge and latency, never contents", async () => {
    const { agent, org } = await liveSetup()
    await call(agent.key, { endpoint: "fakeprov/ok", query: { secret_input: "do-not-store" } })
    await call(agent.key, { endpoint: "fakeprov/fail" })
    const { json, status } = await request(`${world.server.url}/v1/orgs/${org.orgId}/calls`, {
      headers: bearer(org.owner.sessionToken)
    })
    expect(status).toBe(200)
    expect(json.calls.map((c: any) => [c.endpoint, c.status, c.charged.credits])).toEqual([
      ["fakeprov/fail", "failed", "0"],
      ["fakeprov/ok", "succeeded", "10"]
    ])
    expect(json.calls[0].refunded).toEqual({ credits: "10", usd: "0.010", reason: "provider_error" })
    expect(typeof json.calls[1].latency_ms).toBe("number")
    expect(JSON.stringify(json)).not.toContain("do-not-store")
    const page = await request(
      `${world.server.url}/v1/orgs/${org.orgId}/calls?limit=1&starting_after=${json.calls[0].id}`,
      {
        headers: bearer(org.owner.sessionToken)
      }
    )
    expect(page.json.calls.map((c: any) => c.endpoint)).toEqual(["fakeprov/ok"])
    expect(page.json.has_more).toBe(false)
    // Filters by status, endpoint and agent (the dashboard's calls list).
    const listed = async (query: string) =>
      (await request(`${world.server.url}/v1/orgs/${org.orgId}/calls?${query}`, {
        headers: bearer(org.owner.sessionToken)
      })).json
    expect((await listed("status=failed")).calls.map((c: any) => c.endpoint)).toEqual(["fakeprov/fail"])
    expect((await listed("endpoint=fakeprov/ok")).calls.map((c: any) => c.status)).toEqual(["succeeded"])
    expect((await listed(`agent_id=${agent.agentId}`)).calls).toHaveLength(2)
    const otherAgent = await seedAgent(world.db, org.orgId, { mode: "live" })
    expect((await listed(`agent_id=${otherAgent.agentId}`)).calls).toEqual([])
    expect((await listed("agent_id=someone")).error.code).toBe("invalid_input")
    expect((await listed("status=lost")).error.code).toBe("invalid_input")
    const readKey = await seedOrgKey(world.db, org.orgId, org.owner, "read")
    expect(
      (await request(`${world.server.url}/v1/orgs/${org.orgId}/calls`, { headers: bearer(readKey.secret) })).status
    ).toBe(200)
    // No table keeps request or response contents.
    const columns = await world.db.query(
      `SELECT column_name FROM information_schema.columns WHERE table_name = 'gateway_calls'`
    )
    expect(columns.map((c: any) => c.column_name)).not.toContain("data")
  })

  it("lists each call signed: the record verifies with jose against the keys fetched from /.well-known/jwks.json", async () => {
    const { agent, org } = await liveSetup()
    const answered = await call(agent.key, { endpoint: "fakeprov/ok", query: { q: "x" } })
    expect(answered.status).toBe(200)
    const { json } = await request(`${world.server.url}/v1/orgs/${org.orgId}/calls`, {
      headers: bearer(org.owner.sessionToken)
    })
    const [record] = json.calls
    expect(record).toMatchObject({ id: answered.json.call_id, request_hash: expect.stringMatching(/^[0-9a-f]{64}$/) })
    expect(record.signature).toEqual({
      alg: "EdDSA",
      kid: expect.any(String),
      jws: expect.stringMatching(/^[\w-]+\.\.[\w-]+$/)
    })
    expect(await verifyWithJose(world.server.url, record)).toBe(record.signature.kid)
  })
})

describe("POST /v1/call (test keys)", () => {
  it("checks and prices the call without making it; no credits move; the budget counts it", async () => {
    const org = await seedOrg(world.db)
    const agent = await seedAgent(world.db, org.orgId, { mode: "test", monthlyBudgetCredits: 15n })
    const before = world.fake.seen.length
    const first = await call(agent.key, { endpoint: "fakeprov/ok" })
    expect(first.status).toBe(200)
    expect(first.json).toMatchObject({
      status: "test",
      charged: { credits: "10" },
      price: { credits: "10" },
      sample: true
    })
    expect(world.fake.seen.length).toBe(before)
    const second = await call(agent.key, { endpoint: "fakeprov/ok" })
    expect(second.json.error.code).toBe("over_budget")
    expect((await call(agent.key, { endpoint: "fakeprov/ok", max_price: 1 })).json.error.code).toBe("price_above_max")
    const entries = await world.db.query(`SELECT count(*)::int AS n FROM ledger_entries WHERE org_id = $1`, [org.orgId])
    expect(entries[0].n).toBe(0)
    const balance = await request(`${world.server.url}/v1/balance`, { headers: bearer(agent.key) })
    expect(balance.json.month_to_date_spend.credits).toBe("10")
    expect(balance.json.org_credits.credits).toBe("0")
  })
})

describe("test-mode sample data", () => {
  it("answers the sandbox's deterministic sample for the endpoint and parameters, marked as a sample", async () => {
    const org = await seedOrg(world.db)
    const agent = await seedAgent(world.db, org.orgId, { mode: "test" })
    const before = world.fake.seen.length
    const ask = (domain: string) => call(agent.key, { endpoint: "fakeprov/ok", query: { domain } })
    const first = await ask("example.org")
    expect(first.status).toBe(200)
    expect(first.json.sample).toBe(true)
    expect(first.json.provider_status).toBeNull()
    expect(first.json.data).toMatchObject({ sandbox: true, endpoint: "fakeprov/ok" })
    expect(first.json.data.data).not.toBeNull()
    // Same call, same answer; other parameters, another answer. The provider never hears of it.
    expect((await ask("example.org")).json.data).toEqual(first.json.data)
    expect((await ask("another.example")).json.data).not.toEqual(first.json.data)
    expect(world.fake.seen.length).toBe(before)
  })

  it("live keys never carry the sample mark", async () => {
    const org = await seedOrg(world.db)
    await topUp(world, org.orgId, 1_000n)
    const agent = await seedAgent(world.db, org.orgId, { mode: "live" })
    const live = await call(agent.key, { endpoint: "fakeprov/ok" })
    expect(live.json.status).toBe("succeeded")
    expect(live.json).not.toHaveProperty("sample")
  })
})

describe("credentials on the gateway", () => {
  it("needs an agent key", async () => {
    const org = await seedOrg(world.db)
    const orgKey = await seedOrgKey(world.db, org.orgId, org.owner, "write")
    expect((await request(`${world.server.url}/v1/call`, { method: "POST", body: { endpoint: "fakeprov/ok" } })).status)
      .toBe(401)
    const withOrgKey = await call(orgKey.secret, { endpoint: "fakeprov/ok" })
    expect(withOrgKey.status).toBe(403)
    expect(withOrgKey.json.error.code).toBe("forbidden")
    expect((await call(org.owner.sessionToken, { endpoint: "fakeprov/ok" })).status).toBe(401)
  })
})

/** One call to `fakeprov/ok` with `key` (the cached agent keys' suite). */
const callOk = (key: string) => call(key, { endpoint: "fakeprov/ok" })

/** A funded org with a live agent whose key is now in the replica's cache. */
const cachedLiveAgent = async () => {
  const org = await seedOrg(world.db)
  await topUp(world, org.orgId, 10_000n)
  const agent = await seedAgent(world.db, org.orgId, { mode: "live", monthlyBudgetCredits: 50_000n })
  expect((await callOk(agent.key)).status).toBe(200) // the key is now cached
  return { org, agent }
}

/** What a refused call left behind: nothing counted, held or logged. */
const leftBehind = async (orgId: string) =>
  (await world.db.query(
    `SELECT (SELECT COALESCE(sum(calls), 0)::int FROM provider_daily_calls WHERE org_id = $1) AS calls,
            (SELECT count(*)::int FROM gateway_calls WHERE org_id = $1) AS rows,
            (SELECT count(*)::int FROM ledger_holds WHERE org_id = $1) AS holds`,
    [orgId]
  ))[0]

/**
 * A gateway call may take its agent key from the replica's cache; the hold checks it
 * again. Changes here are written straight into the database, as another replica (or an
 * administrator's command) would make them: nothing tells this replica's cache.
 */
describe("cached agent keys on POST /v1/call", () => {
  it("refuses a key revoked or rotated elsewhere at once, counting and holding nothing", async () => {
    const { agent, org } = await cachedLiveAgent()
    await world.db.query(`UPDATE agents SET key_hash = NULL WHERE id = $1`, [agent.agentId])
    const refused = await callOk(agent.key)
    expect(refused.status).toBe(401)
    expect(refused.json.error.code).toBe("unauthenticated")
    expect(await leftBehind(org.orgId)).toEqual({ calls: 1, rows: 1, holds: 1 })
    const inv = await invariants(world.db, org.orgId)
    expect(inv.entriesSum).toBe(inv.balance)
  })

  it("refuses a disabled agent at once, and serves it again once enabled", async () => {
    const { agent } = await cachedLiveAgent()
    await world.db.query(`UPDATE agents SET status = 'disabled' WHERE id = $1`, [agent.agentId])
    expect((await callOk(agent.key)).status).toBe(401)
    await world.db.query(`UPDATE agents SET status = 'active' WHERE id = $1`, [agent.agentId])
    expect((await callOk(agent.key)).status).toBe(200)
  })

  it("applies an allowlist changed elsewhere at once", async () => {
    const { agent } = await cachedLiveAgent()
    await world.db.query(`UPDATE agents SET ip_allowlist = '["203.0.113.0/24"]' WHERE id = $1`, [agent.agentId])
    const refused = await callOk(agent.key)
    expect(refused.status).toBe(403)
    expect(refused.json.error.code).toBe("ip_not_allowed")
  })

  it("prices a call at the org's plan as it is now", async () => {
    const { agent, org } = await cachedLiveAgent()
    await world.db.query(`UPDATE orgs SET plan = 'max' WHERE id = $1`, [org.orgId])
    const answer = await callOk(agent.key)
    expect(answer.status).toBe(200)
    expect(answer.json.charged.credits).toBe(gatewayPrice(10n, "max").toString())
  })

  it("a live agent switched to test mode elsewhere makes test calls at once", async () => {
    const { agent, org } = await cachedLiveAgent()
    const before = await leftBehind(org.orgId)
    await world.db.query(`UPDATE agents SET mode = 'test' WHERE id = $1`, [agent.agentId])
    const answer = await callOk(agent.key)
    expect(answer.status).toBe(200)
    expect(answer.json).toMatchObject({ status: "test", sample: true })
    expect((await leftBehind(org.orgId)).calls).toBe(before.calls)
  })
})

/** `GET /v1/orgs/{orgId}/calls` filtered by part of an endpoint id and by a time range. */
describe("the calls list's filters", () => {
  it("finds calls by endpoint text in any case and by time range", async () => {
    const org = await seedOrg(world.db)
    const agent = await seedAgent(world.db, org.orgId, { mode: "live" })
    await topUp(world, org.orgId, 1_000n)
    for (const endpoint of ["fakeprov/ok", "fakeprov/empty", "fakeprov/ok"]) {
      const made = await call(agent.key, { endpoint })
      expect(made.status).toBe(200)
    }
    // The first call's time splits the range.
    await world.db.query(
      `UPDATE gateway_calls SET created_at = created_at - interval '2 days'
       WHERE id = (SELECT id FROM gateway_calls WHERE org_id = $1 ORDER BY created_at LIMIT 1)`,
      [org.orgId]
    )
    const list = async (query: string) => {
      const answer = await request(`${world.server.url}/v1/orgs/${org.orgId}/calls?${query}`, {
        headers: bearer(org.owner.sessionToken)
      })
      expect(answer.status, query).toBe(200)
      return (answer.json.calls as Array<{ endpoint: string }>).map((c) => c.endpoint)
    }
    expect(await list("endpoint_contains=OK")).toEqual(["fakeprov/ok", "fakeprov/ok"])
    expect(await list("endpoint_contains=prov/")).toHaveLength(3)
    expect(await list("endpoint_contains=%25")).toEqual([])
    const yesterday = new Date(Date.now() - 86_400_000).toISOString()
    expect(await list(`from=${yesterday}`)).toEqual(["fakeprov/ok", "fakeprov/empty"])
    expect(await list(`until=${yesterday}`)).toEqual(["fakeprov/ok"])
    expect(await list(`endpoint_contains=empty&until=${yesterday}`)).toEqual([])
    const bad = await request(`${world.server.url}/v1/orgs/${org.orgId}/calls?from=yesterday`, {
      headers: bearer(org.owner.sessionToken)
    })
    expect(bad.status).toBe(400)
  })

  it("answers 400 invalid_input for a cursor or agent id that is not one, decided by the query's schema", async () => {
    const org = await seedOrg(world.db)
    const list = (query: string) =>
      request(`${world.server.url}/v1/orgs/${org.orgId}/calls?${query}`, { headers: bearer(org.owner.sessionToken) })
    const unknown = "00000000-0000-4000-8000-000000000000"
    expectError(
      await list("starting_after=nope"),
      400,
      "invalid_input",
      "Invalid value for `starting_after`: not a call id"
    )
    expectError(
      await list(`starting_after=${unknown}`),
      400,
      "invalid_input",
      "`starting_after` is not a call of this org"
    )
    expectError(await list("agent_id=nope"), 400, "invalid_input", "Invalid value for `agent_id`: not an agent id")
    const none = await list(`agent_id=${unknown}`)
    expect(none.status).toBe(200)
    expect(none.json.calls).toEqual([])
  })
})
