import { Client } from "@modelcontextprotocol/sdk/client/index.js"
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js"
import { readFileSync } from "node:fs"
import { describe, expect, it } from "vitest"
import { SERVICE_VERSION } from "../../../src/Domain/ServiceVersion.js"
import { bearer, seedAgent, seedOrg } from "../../support/fixtures.js"
import { request } from "../../support/server.js"
import { reach, world } from "./world.js"

export const frontDoorCases = () => {
  describe("the front door", () => {
    it("answers a page naming the service and its version, linking its parts", async () => {
      const page = await request(`${world.server.url}/`, { headers: { accept: "text/html" } })
      expect(page.status).toBe(200)
      expect(page.headers.get("content-type")).toContain("text/html")
      expect(page.headers.get("vary")).toBe("Accept")
      expect(page.text).toContain("Agent Purchasing and Gateway Service")
      expect(page.text).toContain(`Version ${SERVICE_VERSION}`)
      for (const path of ["/dashboard", "/docs", "/openapi.json", "/docs/errors", "/v1/status"]) {
        expect(page.text).toContain(`href="${world.server.baseUrl}${path}"`)
      }
    })

    it("answers JSON when asked for it, with links that work", async () => {
      const { json, status } = await request(`${world.server.url}/`, { headers: { accept: "application/json" } })
      expect(status).toBe(200)
      expect(json).toMatchObject({ name: "Agent Purchasing and Gateway Service", version: SERVICE_VERSION })
      for (const key of ["docs", "openapi", "errors", "status"]) {
        expect((await request(reach(json.links[key]))).status, key).toBe(200)
      }
      expect(json.links.dashboard).toBe(`${world.server.baseUrl}/dashboard`)
    })

    it("keeps the version in one place: the code's constant is package.json's", () => {
      const pkg = JSON.parse(readFileSync(new URL("../../../package.json", import.meta.url), "utf8"))
      expect(SERVICE_VERSION).toBe(pkg.version)
    })
  })

  describe("MCP clients discover how to authenticate", () => {
    const metadataUrl = () => `${world.server.baseUrl}/.well-known/oauth-protected-resource/mcp`

    it("a 401 on /mcp carries a Bearer challenge pointing at the resource metadata", async () => {
      const { headers, json, status } = await request(`${world.server.url}/mcp`, {
        method: "POST",
        headers: { accept: "application/json, text/event-stream" },
        body: { jsonrpc: "2.0", id: 1, method: "initialize", params: {} }
      })
      expect(status).toBe(401)
      expect(json.error.code).toBe("unauthenticated")
      expect(headers.get("www-authenticate")).toBe(
        `Bearer realm="mcp", scope="mcp", resource_metadata="${metadataUrl()}"`
      )
      const wrongKey = await request(`${world.server.url}/mcp`, {
        method: "POST",
        headers: { accept: "application/json, text/event-stream", ...bearer("sk_live_unknown") },
        body: { jsonrpc: "2.0", id: 1, method: "initialize", params: {} }
      })
      expect(wrongKey.status).toBe(401)
      expect(wrongKey.headers.get("www-authenticate")).toContain("resource_metadata=")
    })

    it("the metadata names the resource, bearer tokens in the header, and the service's authorization server", async () => {
      for (const url of [metadataUrl(), `${world.server.url}/.well-known/oauth-protected-resource`]) {
        const { json, status } = await request(url.startsWith(world.server.url) ? url : reach(url))
        expect(status).toBe(200)
        expect(json).toMatchObject({
          resource: `${world.server.baseUrl}/mcp`,
          bearer_methods_supported: ["header"],
          authorization_servers: [`${world.server.baseUrl}/oauth`]
        })
      }
      // The issuer has a path, so its metadata is at the path-suffixed address (RFC 8414), not the root.
      const authServer = await request(`${world.server.url}/.well-known/oauth-authorization-server/oauth`)
      expect(authServer.status).toBe(200)
      expect(authServer.json.issuer).toBe(`${world.server.baseUrl}/oauth`)
      const root = await request(`${world.server.url}/.well-known/oauth-authorization-server`)
      expect(root.status).toBe(404)
      expect(root.json.error.code).toBe("not_found")
    })

    it("the MCP SDK client reports the missing key, and works once given one", async () => {
      const url = new URL(`${world.server.url}/mcp`)
      const anonymous = new Client({ name: "test", version: "1" })
      const failure = await anonymous.connect(new StreamableHTTPClientTransport(url)).catch((error: Error) => error)
      expect(String(failure)).toMatch(/401|unauthenticated|Unauthorized/i)
      const org = await seedOrg(world.db)
      const agent = await seedAgent(world.db, org.orgId)
      const client = new Client({ name: "test", version: "1" })
      await client.connect(new StreamableHTTPClientTransport(url, { requestInit: { headers: bearer(agent.key) } }))
      expect((await client.listTools()).tools.length).toBeGreaterThan(0)
      await client.close()
    })
  })
}
