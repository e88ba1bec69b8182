import { auth, UnauthorizedError } from "@modelcontextprotocol/sdk/client/auth.js"
import { Client } from "@modelcontextprotocol/sdk/client/index.js"
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js"
import { describe, expect, it } from "vitest"
import { OrgId } from "../../../src/Domain/Ids.js"
import { owner } from "../../support/people.js"
import { request } from "../../support/server.js"
import { topUp, type World } from "../../support/world.js"
import {
  followToClient,
  makeBrowser,
  MemoryOAuthProvider,
  openAuthorization,
  pkcePair,
  signInOnConsentPage
} from "../oauthSupport.js"
import { documents, production, world } from "./worlds.js"

/**
 * Client ID metadata documents: an MCP client names itself by the https URL of its metadata,
 * served here by a loopback https server (loopback is allowed outside production, as for
 * webhooks), and signs in without registering. Documents that lie about their client_id,
 * are too large or lack redirect URIs are refused, and so is a private address in production.
 */

const redirect = "http://127.0.0.1:7777/callback"

/** A client that names itself by its document's URL instead of registering. */
class DocumentClient extends MemoryOAuthProvider {
  constructor(readonly clientMetadataUrl: string) {
    super(redirect)
  }
}

const metadataOf = (clientId: string, extra: Record<string, unknown> = {}) => ({
  client_id: clientId,
  client_name: "Document Client",
  client_uri: "https://localhost/",
  redirect_uris: [redirect],
  grant_types: ["authorization_code", "refresh_token"],
  response_types: ["code"],
  token_endpoint_auth_method: "none",
  ...extra
})

/** The authorization request a browser would open for `clientId`, and what it answers. */
const authorize = (target: World, clientId: string) => {
  const url = new URL(`${target.server.baseUrl}/oauth/authorize`)
  const params = {
    client_id: clientId,
    redirect_uri: redirect,
    response_type: "code",
    scope: "mcp",
    state: "s1",
    resource: `${target.server.baseUrl}/mcp`,
    code_challenge: pkcePair().challenge,
    code_challenge_method: "S256"
  }
  for (const [key, value] of Object.entries(params)) url.searchParams.set(key, value)
  return makeBrowser(target).send(url)
}

export const clientMetadataDocumentsCases = () => {
  describe("client ID metadata documents", () => {
    it("signs the SDK client in with a URL client_id: no registration, consent, tools", async () => {
      const metadata = (await request(`${world.server.baseUrl}/.well-known/oauth-authorization-server/oauth`)).json
      expect(metadata.client_id_metadata_document_supported).toBe(true)

      const clientId = documents.url("/mcp/client.json")
      documents.put("/mcp/client.json", metadataOf(clientId), { "cache-control": "max-age=300" })
      const person = await owner(world, "Document Org")
      await topUp(world, OrgId.make(person.orgId), 5_000n)

      const provider = new DocumentClient(clientId)
      const mcpUrl = new URL(`${world.server.baseUrl}/mcp`)
      const connect = async () => {
        const client = new Client({ name: "cimd-test", version: "1.0.0" })
        await client.connect(new StreamableHTTPClientTransport(mcpUrl, { authProvider: provider }))
        return client
      }
      await expect(connect()).rejects.toBeInstanceOf(UnauthorizedError)
      expect(provider.client?.client_id).toBe(clientId)
      const authorizationUrl = provider.authorizationUrl!
      expect(authorizationUrl.searchParams.get("client_id")).toBe(clientId)

      const browser = makeBrowser(world)
      const interaction = await openAuthorization(browser, authorizationUrl)
      const consentPage = await signInOnConsentPage(world, browser, interaction, person.email)
      // The name is the document's; the site that publishes it is shown beside it.
      expect(consentPage.text).toContain(
        `<strong>Document Client</strong> (published at ${new URL(clientId).host}) asks to use this service.`
      )
      const decided = await browser.send(interaction, {
        form: {
          decision: "allow",
          choice: `${person.orgId}:new`,
          name: "Document agent",
          mode: "test",
          monthly_budget: "1000",
          approval_threshold: "500"
        }
      })
      expect(decided.status, decided.text).toBe(303)
      const back = await followToClient(browser, world, decided.location!)
      expect(back.origin + back.pathname).toBe(redirect)
      expect(await auth(provider, { serverUrl: mcpUrl, authorizationCode: back.searchParams.get("code")! })).toBe(
        "AUTHORIZED"
      )

      const client = await connect()
      try {
        const search = await client.callTool({ name: "search_endpoints", arguments: { q: "fakeprov ok" } })
        const found = JSON.parse((search.content as Array<{ text: string }>)[0]!.text)
        expect(found.endpoints.map((e: { id: string }) => e.id)).toContain("fakeprov/ok")
      } finally {
        await client.close()
      }
      // Read once: the authorize step, the consent page and the token exchange used the cached document.
      expect(documents.hits("/mcp/client.json")).toBe(1)
    })

    it("refuses a document whose client_id is not its own URL", async () => {
      const url = documents.url("/liar.json")
      documents.put("/liar.json", metadataOf(documents.url("/someone-else.json")))
      const answer = await authorize(world, url)
      expect(answer.status).toBe(400)
      expect(answer.text).toContain("invalid_client_metadata")
      expect(answer.text).toContain("client_id metadata document client_id does not match the expected value")
      // The service's own page: nothing loaded from another site.
      expect(answer.text).not.toMatch(/https?:\/\/(?!localhost)[^"\s<]*\.(css|woff2?)|@import/)
    })

    it("refuses a document larger than 5 KiB without reading the rest", async () => {
      const url = documents.url("/large.json")
      documents.put("/large.json", metadataOf(url, { client_name: "x".repeat(6 * 1024) }))
      const answer = await authorize(world, url)
      expect(answer.status).toBe(400)
      expect(answer.text).toContain("client_id metadata document fetch failed")
      expect(answer.text).toContain("larger than 5120 bytes")
    })

    it("refuses a document without redirect URIs", async () => {
      const url = documents.url("/no-redirect.json")
      documents.put("/no-redirect.json", metadataOf(url, { redirect_uris: undefined }))
      const answer = await authorize(world, url)
      expect(answer.status).toBe(400)
      expect(answer.text).toContain("redirect_uris")
    })

    it("in production, fetches no document from a loopback or special-use address", async () => {
      documents.put("/private.json", metadataOf(documents.url("/private.json", "127.0.0.1")))
      const before = documents.hits("/private.json")
      const literal = await authorize(production, documents.url("/private.json", "127.0.0.1"))
      expect(literal.status).toBe(400)
      expect(literal.text).toContain("client_id metadata document not fetched")
      expect(literal.text).toContain("127.0.0.1 is not a public address (loopback)")
      const named = await authorize(production, documents.url("/private.json"))
      expect(named.status).toBe(400)
      expect(named.text).toContain("localhost is a special-use name")
      expect(documents.hits("/private.json")).toBe(before)
    })
  })
}
