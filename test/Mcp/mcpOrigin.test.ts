import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { bearer, seedAgent, seedOrg } from "../support/fixtures.js"
import { request } from "../support/server.js"
import { startWorld, type World } from "../support/world.js"

/**
 * The MCP Streamable HTTP transport's Origin rule (against DNS rebinding): a request whose
 * `Origin` is present and not the service's own answers 403, whatever its credential;
 * clients outside browsers send no Origin and are answered as before.
 */
const OWN = "https://gateway.example.test"
let world: World
let key: string

beforeAll(async () => {
  // Production: only the public address's origin is the service's own (no loopback).
  world = await startWorld("mcp_origin", {
    smtp: true,
    env: { BASE_URL: OWN, SERVICE_ENV: "production", SECRETS_ENCRYPTION_KEY: "test-key-for-the-mcp-origin-suite" }
  })
  const org = await seedOrg(world.db)
  key = (await seedAgent(world.db, org.orgId)).key
})
afterAll(async () => {
  await world?.close()
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
  for (const origin of ["https://evil.example", "null", "http://localhost:6274", `${OWN}.evil.example`]) {
    it(`refuses Origin ${origin} with 403 forbidden, even with a valid agent key`, async () => {
      const res = await initialize({ origin })
      expect(res.status).toBe(403)
      expect(res.json.error).toMatchObject({ code: "forbidden", retryable: false })
      expect(res.json.error.message).toContain("may not use this MCP server")
    })
  }

  it("answers the service's own origin, and a client that sends no Origin", async () => {
    const own = await initialize({ origin: OWN })
    expect(own.status).toBe(200)
    expect(own.json.result.serverInfo.name).toBe("agent-gateway")
    expect((await initialize({})).status).toBe(200)
  })
})
