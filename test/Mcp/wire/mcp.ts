import { Client } from "@modelcontextprotocol/sdk/client/index.js"
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js"
import { describe, expect, it } from "vitest"
import { availabilities, categories } from "../../../src/Domain/Catalogue.js"
import { taskTypeIds } from "../../../src/Domain/TaskType.js"
import { isFillerDescription } from "../../../src/Http/OpenApi/Filler.js"
import { bearer, seedAgent, seedOrg, seedOrgKey } from "../../support/fixtures.js"
import { rawRequest, request } from "../../support/server.js"
import { topUp } from "../../support/world.js"
import { clock, world } from "./worlds.js"

/** The MCP server at /mcp, driven by the SDK's own client over Streamable HTTP. */

const connect = async (key: string) => {
  const client = new Client({ name: "money-test", version: "1.0.0" })
  const transport = new StreamableHTTPClientTransport(new URL(`${world.server.url}/mcp`), {
    requestInit: { headers: bearer(key) }
  })
  await client.connect(transport)
  return client
}

const parsed = (result: any) => JSON.parse(result.content[0].text)

export const mcpCases = () => {
  describe("MCP server", () => {
    it("lists the agent API's tools, searches the catalogue and calls an endpoint", async () => {
      const org = await seedOrg(world.db, { plan: "pro" })
      await topUp(world, org.orgId, 1_000n)
      const agent = await seedAgent(world.db, org.orgId, { mode: "live" })
      const client = await connect(agent.key)
      try {
        const tools = await client.listTools()
        expect(tools.tools.map((t) => t.name).sort()).toEqual([
          "call_endpoint",
          "execute",
          "get_approval",
          "get_balance",
          "get_dispute",
          "get_job",
          "get_receipt",
          "list_receipts",
          "open_dispute",
          "recommend",
          "search_endpoints"
        ])
        for (const tool of tools.tools) {
          expect(tool.inputSchema.type, tool.name).toBe("object")
          expect((tool.description ?? "").length, tool.name).toBeGreaterThan(40)
        }
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
        expect(parsed(result)).toMatchObject({
          status: "succeeded",
          charged: { credits: "9" },
          data: { body: { a: 1 } }
        })
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

    it("describes every tool for a model: the endpoint's own text, enums where values are fixed, no filler", async () => {
      const org = await seedOrg(world.db)
      const agent = await seedAgent(world.db, org.orgId)
      const client = await connect(agent.key)
      try {
        const { tools } = await client.listTools()
        const openApi = (await request(`${world.server.url}/openapi.json`)).json
        const operations = Object.values<any>(openApi.paths).flatMap((path) => Object.values<any>(path))
        const byName = new Map(tools.map((t) => [t.name, t]))
        const endpointOf: Record<string, string> = {
          search_endpoints: "public.endpoints",
          call_endpoint: "gateway.call",
          recommend: "purchasing.recommend",
          execute: "purchasing.execute",
          get_job: "purchasing.job",
          list_receipts: "purchasing.receipts",
          get_receipt: "purchasing.receipt",
          open_dispute: "purchasing.openDispute",
          get_dispute: "purchasing.dispute",
          get_approval: "purchasing.approval",
          get_balance: "gateway.balance"
        }
        for (const [name, operationId] of Object.entries(endpointOf)) {
          const tool = byName.get(name)!
          const operation = operations.find((o) => o.operationId === operationId)
          // One place for the words: the endpoint's summary and description in the OpenAPI document.
          expect(tool.description, name).toBe(operation.description)
          expect(tool.title, name).toBe(operation.summary)
          expect(tool.annotations?.readOnlyHint, name).toBe(
            !["call_endpoint", "execute", "open_dispute"].includes(name)
          )
        }
        // The two that spend reach outside providers; nothing destroys.
        for (const name of ["call_endpoint", "execute"]) {
          expect(byName.get(name)!.annotations).toMatchObject({ openWorldHint: true, destructiveHint: false })
        }

        // Every node of every input schema: no $ref, no empty list, no generated title or filler text.
        const visit = (node: unknown, where: string): void => {
          if (Array.isArray(node)) return node.forEach((entry, i) => visit(entry, `${where}[${i}]`))
          if (typeof node !== "object" || node === null) return
          const record = node as Record<string, unknown>
          expect(record.$ref, where).toBeUndefined()
          if ("properties" in record) expect(Object.keys(record.properties as object).length, where).toBeGreaterThan(0)
          if ("required" in record) expect((record.required as Array<string>).length, where).toBeGreaterThan(0)
          if (typeof record.title === "string") expect(record.title, where).not.toMatch(/\(.*\)$|^int$/)
          if (typeof record.description === "string") expect(isFillerDescription(record.description), where).toBe(false)
          for (const [key, value] of Object.entries(record)) visit(value, `${where}.${key}`)
        }
        for (const tool of tools) {
          visit(tool.inputSchema, tool.name)
          for (const [field, schema] of Object.entries<any>(tool.inputSchema.properties ?? {})) {
            expect(schema.description, `${tool.name}.${field}`).toMatch(/\w{3,}/)
          }
        }
        expect(byName.get("get_balance")!.inputSchema).toEqual({ type: "object", additionalProperties: false })

        const properties = (name: string) => byName.get(name)!.inputSchema.properties as Record<string, any>
        expect(properties("recommend").task_type.enum).toEqual([...taskTypeIds])
        expect(byName.get("recommend")!.description).not.toContain("domain_search")
        expect(properties("search_endpoints").category.enum).toEqual([...categories])
        expect(properties("search_endpoints").availability.enum).toEqual([...availabilities])
        expect(properties("execute").tool).not.toHaveProperty("title")
        expect(properties("execute").inputs.items).toEqual({
          type: "object",
          additionalProperties: { anyOf: expect.any(Array) }
        })
        // The tool's body is the endpoint's body: the same fields the REST contract names.
        const executeBody = openApi.components.schemas.ExecuteRequest
        expect(Object.keys(properties("execute")).sort()).toEqual(Object.keys(executeBody.properties).sort())
        expect(byName.get("execute")!.inputSchema.required).toEqual(executeBody.required)
      } finally {
        await client.close()
      }
    })

    it("buys, follows and disputes through the agent API's tools, with errors carrying the service's code", async () => {
      const org = await seedOrg(world.db)
      const agent = await seedAgent(world.db, org.orgId, {
        mode: "test",
        approvalThresholdCredits: null,
        monthlyBudgetCredits: 10_000_000n
      })
      const client = await connect(agent.key)
      const person = (i: number, domain = `acme${i}.example.com`) => ({
        first_name: `Jo${i}`,
        last_name: "Doe",
        domain
      })
      try {
        const ranked = parsed(await client.callTool({ name: "recommend", arguments: { task_type: "email_find" } }))
        expect(ranked.tools.map((t: any) => t.slug)).toContain("hunter-email-finder")

        const bought = await client.callTool({
          name: "execute",
          arguments: { tool: "hunter-email-finder", inputs: [person(1)], idempotency_key: "mcp-1" }
        })
        expect(bought.isError).toBeFalsy()
        const result = parsed(bought)
        expect(result).toMatchObject({ status: "done", item_count: 1, charged: { credits: "40" } })
        const replay = parsed(
          await client.callTool({
            name: "execute",
            arguments: { tool: "hunter-email-finder", inputs: [person(1)], idempotency_key: "mcp-1" }
          })
        )
        expect(replay.receipt_id).toBe(result.receipt_id)

        const receipt = parsed(await client.callTool({ name: "get_receipt", arguments: { id: result.receipt_id } }))
        expect(receipt.receipt).toMatchObject({ id: result.receipt_id, counts: { passed: 1 } })
        const listed = parsed(await client.callTool({ name: "list_receipts", arguments: { limit: 5 } }))
        expect(listed.receipts.map((r: any) => r.id)).toContain(result.receipt_id)

        const dispute = parsed(
          await client.callTool({
            name: "open_dispute",
            arguments: { receipt_id: result.receipt_id, item_index: 0, reason: "bounced" }
          })
        ).dispute
        expect(dispute.status).toBe("open")
        expect(parsed(await client.callTool({ name: "get_dispute", arguments: { id: dispute.id } })).dispute.id).toBe(
          dispute.id
        )

        // An answer with an error body is a tool error carrying the body.
        const failed = await client.callTool({
          name: "execute",
          arguments: { tool: "hunter-email-finder", inputs: [person(2, "mock-fail.example.com")] }
        })
        expect(failed.isError).toBe(true)
        expect(parsed(failed)).toMatchObject({
          error: { code: "check_failed", retryable: false },
          items: [{ index: 0 }]
        })
        const unknown = await client.callTool({ name: "execute", arguments: { tool: "nothing", inputs: [person(3)] } })
        expect(parsed(unknown).error).toMatchObject({ code: "unknown_tool", retryable: false })
        const invalid = await client.callTool({ name: "execute", arguments: { tool: "hunter-email-finder" } })
        expect(parsed(invalid).error.code).toBe("invalid_input")

        const job = parsed(
          await client.callTool({
            name: "execute",
            arguments: {
              tool: "jina-reader",
              inputs: Array.from({ length: 26 }, (_, i) => ({ url: `https://m.example/${i}` }))
            }
          })
        )
        expect(job.status).toBe("queued")
        const followed = parsed(await client.callTool({ name: "get_job", arguments: { id: job.job_id } }))
        expect(followed.job).toMatchObject({ id: job.job_id, item_count: 26, progress: { total: 26 } })

        // The month's spend counts what is charged (40) and what the job holds (26 x 3).
        const balance = parsed(await client.callTool({ name: "get_balance", arguments: {} }))
        expect(balance).toMatchObject({
          agent_id: agent.agentId,
          mode: "test",
          month_to_date_spend: { credits: "118" }
        })
      } finally {
        await client.close()
      }
    })

    it("asks for approval through the execute tool and reads the approval", async () => {
      const org = await seedOrg(world.db)
      const agent = await seedAgent(world.db, org.orgId, { mode: "test", approvalThresholdCredits: 10n })
      const client = await connect(agent.key)
      try {
        const asked = await client.callTool({
          name: "execute",
          arguments: {
            tool: "hunter-email-finder",
            inputs: [{ first_name: "A", last_name: "B", domain: "c.example.com" }]
          }
        })
        expect(asked.isError).toBe(true)
        const body = parsed(asked)
        expect(body.error).toMatchObject({ code: "approval_required", retryable: false })
        const approval = parsed(await client.callTool({ name: "get_approval", arguments: { id: body.approval.id } }))
        expect(approval.approval).toMatchObject({ id: body.approval.id, status: "waiting" })
        const missing = await client.callTool({ name: "get_approval", arguments: { id: "nope" } })
        expect(parsed(missing).error.code).toBe("not_found")
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
      // Windows are clock-aligned minutes: move the service's clock to the start of the next
      // one, so all 600 land in one window.
      const first = await balance()
      clock.advance(Number(first.headers.get("ratelimit-reset")) * 1000)
      expect((await balance()).status).toBe(200)
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
}
