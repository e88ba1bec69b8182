import { beforeAll, describe, expect, it } from "vitest"
import { bearer, seedAgent, seedOrg } from "../../support/fixtures.js"
import { request } from "../../support/server.js"
import { production as world } from "./worlds.js"

/**
 * The MCP Streamable HTTP transport's Origin rule (against DNS rebinding): a request whose
 * `Origin` is present and not the service's own answers 403, whatever its credential;
 * clients outside browsers send no Origin and are answered as before.
 */
let key: string

/** The production service's own origin: its public address (loopback here, and no other loopback origin is its own). */
const own = () => new URL(world.server.baseUrl).origin

export const mcpOriginCases = () => {
  beforeAll(async () => {
    const org = await seedOrg(world.db)
    key = (await seedAgent(world.db, org.orgId)).key
  })

  const initialize = (headers: Record<string, string>) =>
    request(`${world.server.url}/mcp`, {
      method: "POST",
      headers: { accept: "application/json, text/event-stream", ...bearer(key), ...headers },
      body: {
        jsonrpc: "2.0",
        id: 1,
        method: "initialize",
        params: { protocolVersion: "2025-03-26", capabilities: {}, clientInfo: { name: "raw", version: "1" } }
      }
    })

  describe("/mcp and Origin", () => {
    const foreign: ReadonlyArray<readonly [string, () => string]> = [
      ["https://evil.example", () => "https://evil.example"],
      ["null", () => "null"],
      ["http://localhost:6274", () => "http://localhost:6274"],
      ["<own origin>.evil.example", () => `${own()}.evil.example`]
    ]
    for (const [name, origin] of foreign) {
      it(`refuses Origin ${name} with 403 forbidden, even with a valid agent key`, async () => {
        const res = await initialize({ origin: origin() })
        expect(res.status).toBe(403)
        expect(res.json.error).toMatchObject({ code: "forbidden", retryable: false })
        expect(res.json.error.message).toContain("may not use this MCP server")
      })
    }

    it("answers the service's own origin, and a client that sends no Origin", async () => {
      const answered = await initialize({ origin: own() })
      expect(answered.status).toBe(200)
      expect(answered.json.result.serverInfo.name).toBe("agent-gateway")
      expect((await initialize({})).status).toBe(200)
    })
  })
}
