import { Exit } from "effect"
import { describe, expect, it } from "vitest"
import { OrgId } from "../../../src/Domain/Ids.js"
import { sha256Hex } from "../../../src/Services/SecretBox/Hashes.js"
import { eventually } from "../../support/eventually.js"
import { seedAgent, seedOrg } from "../../support/fixtures.js"
import { expectError, joinAs, makeAgent, makeOrgKey, owner } from "../../support/people.js"
import { api, call } from "../../support/world.js"
import { world } from "./world.js"

const invalidKey = "Invalid or revoked API key"
const amount = (credits: number) => ({ credits: String(credits), usd: (credits / 1000).toFixed(3) })

export const agentsCases = () => {
  describe("creating agents", () => {
    it("applies the spec's defaults and shows the key once with a key_note", async () => {
      const boss = await owner(world)
      const res = await call(world, "POST", `/v1/orgs/${boss.orgId}/agents`, {
        token: boss.token,
        body: { name: "Researcher" }
      })
      expect(res.status).toBe(201)
      expect(Object.keys(res.json).sort()).toEqual(["agent", "key", "key_note"])
      const { agent, key } = res.json
      expect(key).toMatch(/^sk_test_[0-9A-Za-z]{43}$/)
      expect(res.json.key_note).toMatch(/shown only/)
      expect(agent).toEqual({
        id: agent.id,
        name: "Researcher",
        mode: "test",
        status: "active",
        monthly_budget: amount(50_000),
        approval_threshold: amount(20_000),
        ip_allowlist: [],
        key_prefix: key.slice(0, 12),
        key_last_used_at: null,
        created_at: agent.created_at
      })
      const [row] = await world.db.query("SELECT key_hash, key_prefix FROM agents WHERE id = $1", [agent.id])
      expect(row).toEqual({ key_hash: sha256Hex(key), key_prefix: key.slice(0, 12) })
      // Listing never shows the key.
      const listed = await call(world, "GET", `/v1/orgs/${boss.orgId}/agents`, { token: boss.token })
      expect(listed.json.agents).toEqual([agent])
      expect(listed.text).not.toContain(key)
      const self = await call(world, "GET", "/v1/agent", { token: key })
      expect(self.status).toBe(200)
      // This request is the key's first use: its stamp is written off the request path, so the
      // answer may or may not show it yet, and shows nothing else changed.
      const { key_last_used_at: stamped, ...seen } = self.json.agent
      const { key_last_used_at: _, ...created } = agent
      expect(seen).toEqual(created)
      expect(stamped === null || Date.parse(stamped) >= Date.parse(agent.created_at)).toBe(true)
    })

    it("takes mode, budgets (numbers or digit strings), a null threshold and an allowlist", async () => {
      const boss = await owner(world)
      const res = await call(world, "POST", `/v1/orgs/${boss.orgId}/agents`, {
        token: boss.token,
        body: {
          name: "Live one",
          mode: "live",
          monthly_budget_credits: "123456",
          approval_threshold_credits: null,
          ip_allowlist: ["10.0.0.0/8", " 2001:db8::/32 ", "192.0.2.7", "::ffff:198.51.100.0/120"]
        }
      })
      expect(res.status).toBe(201)
      expect(res.json.key).toMatch(/^sk_live_/)
      expect(res.json.agent).toMatchObject({
        mode: "live",
        monthly_budget: amount(123_456),
        approval_threshold: null,
        ip_allowlist: ["10.0.0.0/8", "2001:db8::/32", "192.0.2.7", "::ffff:198.51.100.0/120"]
      })
      const other = await call(world, "POST", `/v1/orgs/${boss.orgId}/agents`, {
        token: boss.token,
        body: { name: "Zero", monthly_budget_credits: 0, approval_threshold_credits: 1 }
      })
      expect(other.json.agent).toMatchObject({ monthly_budget: amount(0), approval_threshold: amount(1) })
    })

    it("validates name (required, at most 80 characters), amounts and allowlist entries", async () => {
      const boss = await owner(world)
      const post = (body: unknown) => call(world, "POST", `/v1/orgs/${boss.orgId}/agents`, { token: boss.token, body })
      expectError(await post({}), 400, "invalid_input")
      expectError(await post({ name: "" }), 400, "invalid_input")
      expectError(await post({ name: "x".repeat(81) }), 400, "invalid_input")
      expect((await post({ name: "x".repeat(80) })).status).toBe(201)
      expectError(await post({ name: "a", mode: "prod" }), 400, "invalid_input")
      expectError(await post({ name: "a", monthly_budget_credits: -1 }), 400, "invalid_input")
      expectError(await post({ name: "a", monthly_budget_credits: 1.5 }), 400, "invalid_input")
      expectError(await post({ name: "a", monthly_budget_credits: "12.5" }), 400, "invalid_input")
      const bad = await post({ name: "a", ip_allowlist: ["10.0.0.1", "10.0.0.300"] })
      expectError(bad, 400, "invalid_input")
      expect(bad.json.error.message).toContain("\"10.0.0.300\"")
      const badRange = await post({ name: "a", ip_allowlist: ["2001:db8::/129"] })
      expectError(badRange, 400, "invalid_input")
      expect(badRange.json.error.message).toContain("\"2001:db8::/129\"")
    })

    it("stops at the plan's active-agent limit (Pay as you go: 5) with 402 plan_limit; disabled agents do not count", async () => {
      const pricing = await call(world, "GET", "/v1/pricing")
      expect(pricing.json.plans.map((p: any) => [p.id, p.max_active_agents])).toEqual([["payg", 5], ["pro", 25], [
        "max",
        100
      ]])
      const boss = await owner(world)
      const made = []
      for (let i = 0; i < 5; i++) made.push(await makeAgent(world, boss.token, boss.orgId, { name: `A${i}` }))
      expectError(
        await call(world, "POST", `/v1/orgs/${boss.orgId}/agents`, { token: boss.token, body: { name: "sixth" } }),
        402,
        "plan_limit"
      )
      await call(world, "PATCH", `/v1/orgs/${boss.orgId}/agents/${made[0]!.id}`, {
        token: boss.token,
        body: { status: "disabled" }
      })
      const sixth = await makeAgent(world, boss.token, boss.orgId, { name: "sixth" })
      expect(sixth.agent.status).toBe("active")
      // Re-enabling would go past the limit.
      expectError(
        await call(world, "PATCH", `/v1/orgs/${boss.orgId}/agents/${made[0]!.id}`, {
          token: boss.token,
          body: { status: "active" }
        }),
        402,
        "plan_limit"
      )
    })

    it("any member may create agents, with a session or a write key; a read key may only look", async () => {
      const boss = await owner(world)
      const member = await joinAs(world, boss.token, boss.orgId)
      expect((await makeAgent(world, member.token, boss.orgId)).key).toMatch(/^sk_test_/)
      const write = await makeOrgKey(world, boss.token, boss.orgId, "write")
      const read = await makeOrgKey(world, boss.token, boss.orgId, "read")
      expect((await makeAgent(world, write.secret, boss.orgId)).key).toMatch(/^sk_test_/)
      expectError(
        await call(world, "POST", `/v1/orgs/${boss.orgId}/agents`, { token: read.secret, body: { name: "no" } }),
        403,
        "forbidden",
        "This org key is read-only"
      )
      const listed = await call(world, "GET", `/v1/orgs/${boss.orgId}/agents`, { token: read.secret })
      expect(listed.json.agents).toHaveLength(2)
    })
  })

  describe("changing agents", () => {
    it("changes name, budgets, threshold and allowlist; [] clears it; mode is fixed", async () => {
      const boss = await owner(world)
      const { id } = await makeAgent(world, boss.token, boss.orgId, { ip_allowlist: ["127.0.0.1"] })
      const patch = (body: unknown) =>
        call(world, "PATCH", `/v1/orgs/${boss.orgId}/agents/${id}`, { token: boss.token, body })
      const changed = await patch({
        name: "Renamed",
        monthly_budget_credits: 1000,
        approval_threshold_credits: null,
        ip_allowlist: []
      })
      expect(changed.status).toBe(200)
      expect(changed.json.agent).toMatchObject({
        name: "Renamed",
        monthly_budget: amount(1000),
        approval_threshold: null,
        ip_allowlist: []
      })
      expect((await patch({ approval_threshold_credits: "250" })).json.agent.approval_threshold).toEqual(amount(250))
      expect((await patch({})).json.agent.name).toBe("Renamed")
      const fixed = await patch({ mode: "live" })
      expectError(fixed, 400, "invalid_input")
      expect(fixed.json.error.message).toContain("mode")
      const bad = await patch({ ip_allowlist: ["localhost"] })
      expectError(bad, 400, "invalid_input")
      expect(bad.json.error.message).toContain("\"localhost\"")
      expectError(await patch({ name: "y".repeat(81) }), 400, "invalid_input")
    })

    it("a disabled agent's key answers 401 (key unchanged) and works again when re-enabled", async () => {
      const boss = await owner(world)
      const { id, key } = await makeAgent(world, boss.token, boss.orgId)
      const disabled = await call(world, "PATCH", `/v1/orgs/${boss.orgId}/agents/${id}`, {
        token: boss.token,
        body: { status: "disabled" }
      })
      expect(disabled.json.agent).toMatchObject({ status: "disabled", key_prefix: key.slice(0, 12) })
      expectError(await call(world, "GET", "/v1/agent", { token: key }), 401, "unauthenticated", invalidKey)
      await call(world, "PATCH", `/v1/orgs/${boss.orgId}/agents/${id}`, {
        token: boss.token,
        body: { status: "active" }
      })
      expect((await call(world, "GET", "/v1/agent", { token: key })).status).toBe(200)
    })

    it("rotate-key refuses the old key at once; revoke-key leaves the agent keyless until a rotate", async () => {
      const boss = await owner(world)
      const { id, key } = await makeAgent(world, boss.token, boss.orgId, { mode: "live" })
      const rotated = await call(world, "POST", `/v1/orgs/${boss.orgId}/agents/${id}/rotate-key`, { token: boss.token })
      expect(rotated.status).toBe(200)
      expect(Object.keys(rotated.json).sort()).toEqual(["key", "key_note"])
      expect(rotated.json.key).toMatch(/^sk_live_/)
      expectError(await call(world, "GET", "/v1/agent", { token: key }), 401, "unauthenticated", invalidKey)
      const self = await call(world, "GET", "/v1/agent", { token: rotated.json.key })
      expect(self.json.agent.key_prefix).toBe(rotated.json.key.slice(0, 12))

      const revoked = await call(world, "POST", `/v1/orgs/${boss.orgId}/agents/${id}/revoke-key`, { token: boss.token })
      expect(revoked.json).toEqual({ status: "revoked" })
      expectError(
        await call(world, "GET", "/v1/agent", { token: rotated.json.key }),
        401,
        "unauthenticated",
        invalidKey
      )
      const keyless = await call(world, "GET", `/v1/orgs/${boss.orgId}/agents/${id}`, { token: boss.token })
      expect(keyless.json.agent.key_prefix).toBeNull()
      expect((await world.db.query("SELECT key_hash FROM agents WHERE id = $1", [id]))[0].key_hash).toBeNull()

      const reissued = await call(world, "POST", `/v1/orgs/${boss.orgId}/agents/${id}/rotate-key`, {
        token: boss.token
      })
      expect((await call(world, "GET", "/v1/agent", { token: reissued.json.key })).status).toBe(200)
    })

    it("another org's agent, an unknown id and a malformed id answer 404 not_found", async () => {
      const a = await owner(world)
      const b = await owner(world)
      const { id } = await makeAgent(world, a.token, a.orgId)
      for (const agentId of [id, "00000000-0000-4000-8000-000000000000", "not-a-uuid"]) {
        expectError(
          await call(world, "GET", `/v1/orgs/${b.orgId}/agents/${agentId}`, { token: b.token }),
          404,
          "not_found"
        )
        expectError(
          await call(world, "PATCH", `/v1/orgs/${b.orgId}/agents/${agentId}`, { token: b.token, body: { name: "x" } }),
          404,
          "not_found"
        )
        expectError(
          await call(world, "POST", `/v1/orgs/${b.orgId}/agents/${agentId}/rotate-key`, { token: b.token }),
          404,
          "not_found"
        )
        expectError(
          await call(world, "POST", `/v1/orgs/${b.orgId}/agents/${agentId}/revoke-key`, { token: b.token }),
          404,
          "not_found"
        )
      }
    })

    it("says has_more when a plain call stops at its 50 agents (the typed client reads it)", async () => {
      const { orgId, owner: boss } = await seedOrg(world.db, { plan: "max" })
      for (let i = 0; i < 51; i++) await seedAgent(world.db, orgId, { name: `Many ${i}` })
      const first = await call(world, "GET", `/v1/orgs/${orgId}/agents`, { token: boss.sessionToken })
      expect(first.json.agents).toHaveLength(50)
      expect(first.json.has_more).toBe(true)
      const rest = await api(world, boss.sessionToken, (client) =>
        client.agents.list({
          path: { orgId: OrgId.make(orgId) },
          urlParams: { limit: 50, starting_after: first.json.agents[49].id }
        }))
      if (!Exit.isSuccess(rest)) throw new Error(`the second page failed: ${String(rest.cause)}`)
      expect(rest.value.agents).toHaveLength(1)
      expect(rest.value.has_more).toBe(false)
    })

    it("lists newest first with limit and starting_after", async () => {
      const boss = await owner(world)
      const ids = []
      for (let i = 0; i < 3; i++) ids.push((await makeAgent(world, boss.token, boss.orgId, { name: `L${i}` })).id)
      const first = await call(world, "GET", `/v1/orgs/${boss.orgId}/agents?limit=2`, { token: boss.token })
      expect(first.json.agents.map((a: any) => a.id)).toEqual([ids[2], ids[1]])
      expect(first.json.has_more).toBe(true)
      const next = await call(world, "GET", `/v1/orgs/${boss.orgId}/agents?limit=2&starting_after=${ids[1]}`, {
        token: boss.token
      })
      expect(next.json.agents.map((a: any) => a.id)).toEqual([ids[0]])
      expect(next.json.has_more).toBe(false)
      // A page that ends exactly at the last agent says there is no more.
      const exact = await call(world, "GET", `/v1/orgs/${boss.orgId}/agents?limit=3`, { token: boss.token })
      expect(exact.json).toMatchObject({ has_more: false })
      expect(exact.json.agents).toHaveLength(3)
      expectError(
        await call(world, "GET", `/v1/orgs/${boss.orgId}/agents?limit=500`, { token: boss.token }),
        400,
        "invalid_input"
      )
    })
  })

  describe("key use", () => {
    it("records key_last_used_at (at most once a minute) and the addresses the key is used from", async () => {
      const boss = await owner(world)
      const { id, key } = await makeAgent(world, boss.token, boss.orgId)
      await call(world, "GET", "/v1/agent", { token: key, ip: "203.0.113.10" })
      await call(world, "GET", "/v1/agent", { token: key, ip: "2001:db8::5" })
      const { agent, rows } = await eventually(async () => {
        const rows = await world.db.query(
          "SELECT address FROM agent_key_addresses WHERE agent_id = $1 ORDER BY address",
          [id]
        )
        const [agent] = await world.db.query("SELECT key_last_used_at FROM agents WHERE id = $1", [id])
        return rows.length === 2 && agent.key_last_used_at !== null && { rows, agent }
      }, { what: "usage recorded" })
      expect(rows.map((r: any) => r.address)).toEqual(["2001:db8::5", "203.0.113.10"])
      const shown = await call(world, "GET", "/v1/agent", { token: key, ip: "203.0.113.10" })
      expect(shown.json.agent.key_last_used_at).toBe(new Date(agent.key_last_used_at).toISOString())
    })
  })
}
