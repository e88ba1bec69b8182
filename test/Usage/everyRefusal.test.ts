import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { emailFindInput } from "../Purchasing/support.js"
import { seedAgent, seedOrg } from "../support/fixtures.js"
import { call, eventually, startWorld, topUp, type World } from "../support/world.js"

/**
 * Every refusal the agent API gives reaches the agent's owner: the usage answer's refusals
 * (the agent's "Refused this month", Calls filtered to refused) and the usage export, each
 * counted once. The refusals made before a key is checked (the allowlist, a disabled agent,
 * a rotated or revoked key) are counted against the agent whose key it is or was.
 */
let world: World

beforeAll(async () => {
  world = await startWorld("every_refusal", { provider: true })
})

afterAll(() => world?.close())

const gatewayCall = (key: string) => call(world, "POST", "/v1/call", { token: key, body: { endpoint: "fakeprov/ok" } })
const execute = (key: string, body: unknown) => call(world, "POST", "/v1/execute", { token: key, body })

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
