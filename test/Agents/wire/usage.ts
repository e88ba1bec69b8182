import { expect, it } from "vitest"
import { bearer, seedAgent, seedOrg, seedOrgKey, seedUser } from "../../support/fixtures.js"
import { request } from "../../support/server.js"
import { call } from "../../support/world.js"
import { world } from "./world.js"

/**
 * What an owner reads of its agents on the wire: `GET /v1/orgs/{orgId}/usage` and the
 * exports (`GET /v1/orgs/{orgId}/exports/{dataset}`): who may read them, statuses and codes,
 * the exports' headers; and the refusals the edge counts for an agent before any service
 * runs (its allowlist, a disabled agent, a rotated or revoked key, on the HttpApi's routes
 * and on `/mcp`) reaching its owner. What usage adds up, the refusals the services count and
 * the exports' content are the usage services' suite's (`test/Usage/usage.test.ts`).
 */
const usage = (orgId: string, token: string, query = "") =>
  request(`${world.server.url}/v1/orgs/${orgId}/usage${query}`, { headers: bearer(token) })

const download = (orgId: string, token: string, path: string) =>
  fetch(`${world.server.url}/v1/orgs/${orgId}/exports/${path}`, { headers: bearer(token) })

const gatewayCall = (key: string) => call(world, "POST", "/v1/call", { token: key, body: { endpoint: "fakeprov/ok" } })

/** The refusal codes and counts of each agent, as the usage answer lists them. */
const refusalsOf = async (orgId: string, token: string) => {
  const answer = await call(world, "GET", `/v1/orgs/${orgId}/usage`, { token })
  expect(answer.status).toBe(200)
  const byAgent = new Map<string, Record<string, number>>()
  for (const row of answer.json.refusals as Array<{ agent_id: string; code: string; count: number }>) {
    byAgent.set(row.agent_id, { ...byAgent.get(row.agent_id), [row.code]: row.count })
  }
  return byAgent
}

export const usageCases = () => {
  it("is open to members and org keys of the org, and to nobody else", async () => {
    const org = await seedOrg(world.db)
    const readKey = await seedOrgKey(world.db, org.orgId, org.owner, "read")
    const owned = await usage(org.orgId, org.owner.sessionToken)
    expect(owned.status).toBe(200)
    expect(owned.json).toMatchObject({
      org_id: org.orgId,
      balance: { credits: expect.stringMatching(/^\d+$/), usd: expect.any(String) },
      range: { from: expect.any(String), to: expect.any(String) },
      refusals: [],
      by_agent: [],
      top_endpoints: [],
      top_tools: []
    })
    expect((await usage(org.orgId, readKey.secret)).status).toBe(200)
    const outsider = await seedUser(world.db)
    expect((await usage(org.orgId, outsider.sessionToken)).status).not.toBe(200)
    const otherOrg = await seedOrg(world.db)
    expect((await usage(otherOrg.orgId, readKey.secret)).status).toBe(403)
  })

  it("answers a bad range with 400 invalid_input, on usage and on the exports", async () => {
    const org = await seedOrg(world.db)
    for (const query of ["?from=2026-13-01", "?from=2026-10-02&to=2026-10-01", "?from=2024-01-01&to=2026-01-01"]) {
      const { json, status } = await usage(org.orgId, org.owner.sessionToken, query)
      expect(status, query).toBe(400)
      expect(json.error.code, query).toBe("invalid_input")
    }
    expect((await usage(org.orgId, org.owner.sessionToken, "?from=2025-11-24&to=2026-11-24")).status).toBe(200)
    const bad = await download(org.orgId, org.owner.sessionToken, "calls?from=2026-02-30")
    expect(bad.status).toBe(400)
    expect((await bad.json()).error.code).toBe("invalid_input")
  })

  it("streams an export as CSV or JSON Lines, with no length, as an attachment named after its range", async () => {
    const org = await seedOrg(world.db)
    await world.db.query(
      `INSERT INTO ledger_entries (id, org_id, kind, amount, credits, note, created_at)
       SELECT gen_random_uuid(), $1, 'adjustment', g, g, 'seeded', timestamptz '2026-01-01' + g * interval '1 day'
       FROM generate_series(1, 3) AS g`,
      [org.orgId]
    )
    const csv = await download(org.orgId, org.owner.sessionToken, "ledger?from=2026-01-01&to=2026-12-31")
    expect(csv.status).toBe(200)
    expect(csv.headers.get("content-type")).toBe("text/csv; charset=utf-8")
    expect(csv.headers.get("content-length")).toBeNull()
    expect(csv.headers.get("cache-control")).toBe("no-store")
    expect(csv.headers.get("content-disposition")).toBe(
      "attachment; filename=\"ledger-2026-01-01-to-2026-12-31.csv\""
    )
    const lines = (await csv.text()).split("\r\n")
    expect(lines[0]).toBe("id,seq,created_at,kind,balance_change_credits,credits,agent_id,hold_id,note")
    expect(lines).toHaveLength(5)

    const jsonl = await download(org.orgId, org.owner.sessionToken, "ledger?from=2026-01-01&to=2026-01-31&format=jsonl")
    expect(jsonl.status).toBe(200)
    expect(jsonl.headers.get("content-type")).toBe("application/x-ndjson; charset=utf-8")
    expect(jsonl.headers.get("content-disposition")).toBe(
      "attachment; filename=\"ledger-2026-01-01-to-2026-01-31.jsonl\""
    )
    const objects = (await jsonl.text()).trim().split("\n").map((line) => JSON.parse(line))
    expect(objects.map((o) => o.kind)).toEqual(["adjustment", "adjustment", "adjustment"])
  })

  it("refuses an unknown dataset and another org's data before anything is sent", async () => {
    const org = await seedOrg(world.db)
    const unknown = await download(org.orgId, org.owner.sessionToken, "everything")
    expect(unknown.status).toBe(400)
    expect((await unknown.json()).error.code).toBe("invalid_input")
    const other = await seedOrg(world.db)
    expect((await download(other.orgId, org.owner.sessionToken, "calls")).status).not.toBe(200)
  })

  it("counts the allowlist, a disabled agent and an old key, refused at the edge, in usage and its export", async () => {
    const org = await seedOrg(world.db)
    const token = org.owner.sessionToken
    const fenced = await seedAgent(world.db, org.orgId, { name: "fenced", ipAllowlist: ["203.0.113.5"] })
    const disabled = await seedAgent(world.db, org.orgId, { name: "disabled", status: "disabled" })
    const rotated = await seedAgent(world.db, org.orgId, { name: "rotated" })
    const revoked = await seedAgent(world.db, org.orgId, { name: "revoked" })

    // Before the key is checked.
    const offList = await call(world, "GET", "/v1/agent", { token: fenced.key })
    expect(offList.status).toBe(403)
    expect(offList.json.error.code).toBe("ip_not_allowed")
    expect((await gatewayCall(fenced.key)).status).toBe(403)
    expect((await call(world, "GET", "/v1/agent", { token: disabled.key })).status).toBe(401)
    const rotate = await call(world, "POST", `/v1/orgs/${org.orgId}/agents/${rotated.agentId}/rotate-key`, { token })
    expect(rotate.status).toBe(200)
    expect((await call(world, "GET", "/v1/balance", { token: rotated.key })).status).toBe(401)
    const revoke = await call(world, "POST", `/v1/orgs/${org.orgId}/agents/${revoked.agentId}/revoke-key`, { token })
    expect(revoke.status).toBe(200)
    expect((await gatewayCall(revoked.key)).status).toBe(401)

    const refusals = await refusalsOf(org.orgId, token)
    expect(Object.fromEntries(refusals)).toEqual({
      [fenced.agentId]: { ip_not_allowed: 2 },
      [disabled.agentId]: { unauthenticated: 1 },
      [rotated.agentId]: { unauthenticated: 1 },
      [revoked.agentId]: { unauthenticated: 1 }
    })

    // The usage export counts the same refusals per agent and day.
    const exported = await call(world, "GET", `/v1/orgs/${org.orgId}/exports/usage?format=jsonl`, { token })
    expect(exported.status).toBe(200)
    const rows = exported.text.trim().split("\n").map((line) => JSON.parse(line))
    const exportedRefusals = (agentId: string) =>
      rows.filter((row) => row.agent_id === agentId).reduce((sum, row) => sum + Number(row.refusals), 0)
    expect(exportedRefusals(fenced.agentId)).toBe(2)
    expect(exportedRefusals(disabled.agentId)).toBe(1)
    expect(exportedRefusals(rotated.agentId)).toBe(1)
    expect(exportedRefusals(revoked.agentId)).toBe(1)
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
}
