import { Client } from "@modelcontextprotocol/sdk/client/index.js"
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { seedAgent, seedOrg } from "../../support/fixtures.js"
import { world } from "./world.js"

/**
 * The MCP stdio bridge (clients/typescript/src/bridge.ts) started as a child process and
 * driven by the MCP SDK's stdio client, forwarding to the service's /mcp.
 */
let client: Client

const tsx = new URL("../../../node_modules/.bin/tsx", import.meta.url).pathname
const bridge = new URL("../../../clients/typescript/src/bridge.ts", import.meta.url).pathname
const parsed = (result: any) => JSON.parse(result.content[0].text)

export const bridgeCases = () => {
  beforeAll(async () => {
    const org = await seedOrg(world.db)
    const agent = await seedAgent(world.db, org.orgId, {
      approvalThresholdCredits: null,
      monthlyBudgetCredits: 10_000_000n
    })
    client = new Client({ name: "bridge-test", version: "1.0.0" })
    await client.connect(
      new StdioClientTransport({
        command: tsx,
        args: [bridge],
        env: { PATH: process.env["PATH"] ?? "", SERVICE_API_KEY: agent.key, SERVICE_API_URL: world.server.url },
        stderr: "pipe"
      })
    )
  }, 60_000)

  afterAll(async () => {
    await client?.close()
  })

  describe("the MCP stdio bridge", () => {
    it("lists the service's tools, searches, calls and buys through it", async () => {
      const tools = (await client.listTools()).tools.map((tool) => tool.name)
      expect(tools).toEqual(expect.arrayContaining(["search_endpoints", "call_endpoint", "execute", "get_receipt"]))
      const found = parsed(await client.callTool({ name: "search_endpoints", arguments: { q: "fakeprov ok" } }))
      expect(found.endpoints.map((endpoint: any) => endpoint.id)).toContain("fakeprov/ok")
      const called = parsed(await client.callTool({ name: "call_endpoint", arguments: { endpoint: "fakeprov/ok" } }))
      expect(called).toMatchObject({ endpoint: "fakeprov/ok", status: "test" })
      const bought = parsed(
        await client.callTool({
          name: "execute",
          arguments: {
            tool: "hunter-email-finder",
            inputs: [{ first_name: "Jo", last_name: "Doe", domain: "b.example" }]
          }
        })
      )
      expect(bought).toMatchObject({ status: "done", item_count: 1 })
    })

    it("answers connection_failed when the service cannot be reached", async () => {
      await world.server.close()
      const result = await client.callTool({ name: "search_endpoints", arguments: {} })
      expect(result.isError).toBe(true)
      expect(parsed(result).error).toMatchObject({ code: "connection_failed", retryable: true })
    }, 60_000)
  })
}
