import { Client } from "@modelcontextprotocol/sdk/client/index.js"
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { bearer, seedAgent, seedOrg, seedOrgKey } from "../support/fixtures.js"
import { rawRequest, request } from "../support/server.js"
import { startWorld, topUp, type World } from "../support/world.js"

/** The MCP server at /mcp, driven by the SDK's own client over Streamable HTTP. */
let world: World

beforeAll(async () => {
  world = await startWorld("mcp", { provider: true, env: { PROVIDER_FAKEPROV_API_KEY: "fake-secret-123" } })
})

afterAll(() => world?.close())

const connect = async (key: string) => {
  const client = new Client({ name: "money-test", version: "1.0.0" })
  const transport = new StreamableHTTPClientTransport(new URL(`${world.server.url}/mcp`), {
    requestInit: { headers: bearer(key) }
  })
  await client.connect(transport)
  return client
}

const parsed = (result: any) => JSON.parse(result.content[0].text)

describe("MCP server", () => {
  it("lists search_endpoints and call_endpoint, searches the catalogue and calls an endpoint", async () => {
    const org = await seedOrg(world.db, { plan: "pro" })
    await topUp(world, org.orgId, 1_000n)
    const agent = await seedAgent(world.db, org.orgId, { mode: "live" })
    const client = await connect(agent.key)
    try {
      const tools = await client.listTools()
      expect(tools.tools.map((t) => t.name).sort()).toEqual(["call_endpoint", "search_endpoints"])
      const call = tools.tools.find((t) => t.name === "call_endpoint")!
      expect(Object.keys(call.inputSchema.properties ?? {}).sort()).toEqual(
        ["body", "endpoint", "max_price", "path_params", "query"]
      )
      expect(call.inputSchema.required).toEqual(["endpoint"])

      const search = await client.callTool({
        name: "search_endpoints",
        arguments: { q: "fakeprov ok", provider: "fakeprov" }
      })
      expect(search.isError).toBeFalsy()
      const found = parsed(search).endpoints
      expect(found.map((e: any) => e.id)).toContain("fakeprov/ok")
      // Priced for the org's plan (Pro: 0.9 x 10 credits).
      expect(found.find((e: any) => e.id === "fakeprov/ok").price_per_call).toBe("9")

      const result = await client.callTool({
        name: "call_endpoint",
        arguments: { endpoint: "fakeprov/echo", body: { a: 1 } }
      })
      expect(result.isError).toBeFalsy()
      expect(parsed(result)).toMatchObject({ status: "succeeded", charged: { credits: "9" }, data: { body: { a: 1 } } })
      expect(result.structuredContent).toMatchObject({ status: "succeeded" })

      const failed = await client.callTool({ name: "call_endpoint", arguments: { endpoint: "fakeprov/fail" } })
      expect(parsed(failed)).toMatchObject({ status: "failed", refunded: { credits: "9", reason: "provider_error" } })

      const unknown = await client.callTool({ name: "call_endpoint", arguments: { endpoint: "nobody/nothing" } })
      expect(unknown.isError).toBe(true)
      expect(parsed(unknown).error).toMatchObject({ code: "unknown_endpoint", retryable: false })

      const bad = await client.callTool({ name: "call_endpoint", arguments: { endpoint: "fakeprov/ok", query: "x" } })
      expect(bad.isError).toBe(true)
      expect(parsed(bad).error.code).toBe("invalid_input")

      const balance = await request(`${world.server.url}/v1/balance`, { headers: bearer(agent.key) })
      expect(balance.json.org_credits.credits).toBe("991")
    } finally {
      await client.close()
    }
  })

  it("applies the agent-key rules itself", async () => {
    const org = await seedOrg(world.db)
    const orgKey = await seedOrgKey(world.db, org.orgId, org.owner, "write")
    const fenced = await seedAgent(world.db, org.orgId, { ipAllowlist: ["203.0.113.0/24"] })
    const disabled = await seedAgent(world.db, org.orgId, { status: "disabled" })
    const init = {
      jsonrpc: "2.0",
      id: 1,
      method: "initialize",
      params: { protocolVersion: "2025-03-26", capabilities: {}, clientInfo: { name: "raw", version: "1" } }
    }
    const post = (headers: Record<string, string>) =>
      request(`${world.server.url}/mcp`, {
        method: "POST",
        headers: { accept: "application/json, text/event-stream", ...headers },
        body: init
      })
    const none = await post({})
    expect(none.status).toBe(401)
    expect(none.json.error.code).toBe("unauthenticated")
    expect((await post(bearer(org.owner.sessionToken))).status).toBe(401)
    expect((await post(bearer(disabled.key))).json.error.code).toBe("unauthenticated")
    const withOrgKey = await post(bearer(orgKey.secret))
    expect(withOrgKey.status).toBe(403)
    expect(withOrgKey.json.error.code).toBe("forbidden")
    const outside = await post(bearer(fenced.key))
    expect(outside.status).toBe(403)
    expect(outside.json.error.code).toBe("ip_not_allowed")

    const agent = await seedAgent(world.db, org.orgId)
    const ok = await post(bearer(agent.key))
    expect(ok.status).toBe(200)
    expect(ok.headers.get("ratelimit-policy")).toBe("600;w=60")

    for (const method of ["GET", "DELETE", "PUT"]) {
      const other = await request(`${world.server.url}/mcp`, { method, headers: bearer(agent.key) })
      expect(other.status).toBe(405)
      expect(other.json.error.code).toBe("method_not_allowed")
      expect(other.headers.get("allow")).toBe("POST")
    }
  })

  it("answers a chunked body over 1 MB with the service's 413 payload_too_large", async () => {
    const org = await seedOrg(world.db)
    const agent = await seedAgent(world.db, org.orgId)
    const chunk = "a".repeat(64 * 1024)
    const res = await rawRequest(world.server.url, {
      method: "POST",
      path: "/mcp",
      headers: {
        ...bearer(agent.key),
        accept: "application/json, text/event-stream",
        "content-type": "application/json",
        "transfer-encoding": "chunked"
      },
      chunks: [
        "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\",\"params\":{\"pad\":\"",
        ...Array.from({ length: 17 }, () => chunk),
        "\"}}"
      ]
    })
    expect(res.status).toBe(413)
    expect(JSON.parse(res.body).error).toMatchObject({ code: "payload_too_large", retryable: false })
  })

  it("counts /mcp against the agent's 600 requests a minute", async () => {
    const org = await seedOrg(world.db)
    const agent = await seedAgent(world.db, org.orgId)
    const balance = () => request(`${world.server.url}/v1/balance`, { headers: bearer(agent.key) })
    // Windows are clock-aligned minutes: start in a fresh one so all 600 land in one window.
    const first = await balance()
    const reset = Number(first.headers.get("ratelimit-reset"))
    if (reset < 20) {
      await new Promise((resolve) => setTimeout(resolve, (reset + 1) * 1000))
      expect((await balance()).status).toBe(200)
    }
    // Use up the window through the REST agent endpoint; /mcp shares the same count.
    for (let sent = 1; sent < 600; sent += 50) {
      const batch = await Promise.all(Array.from({ length: Math.min(50, 600 - sent) }, balance))
      expect(batch.every((r) => r.status === 200)).toBe(true)
    }
    const limited = await request(`${world.server.url}/mcp`, {
      method: "POST",
      headers: { ...bearer(agent.key), accept: "application/json, text/event-stream" },
      body: { jsonrpc: "2.0", id: 1, method: "tools/list" }
    })
    expect(limited.status).toBe(429)
    expect(limited.json.error.code).toBe("rate_limited")
    expect(limited.headers.get("retry-after")).not.toBeNull()
  })
})
