import { auth, UnauthorizedError } from "@modelcontextprotocol/sdk/client/auth.js"
import { Client } from "@modelcontextprotocol/sdk/client/index.js"
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { OrgId } from "../../src/Domain/Ids.js"
import { owner } from "../support/people.js"
import { request } from "../support/server.js"
import { makeShiftableClock } from "../support/shiftableClock.js"
import { call, startWorld, topUp, type World } from "../support/world.js"
import {
  followToClient,
  makeBrowser,
  MemoryOAuthProvider,
  openAuthorization,
  signInOnConsentPage
} from "./oauthSupport.js"

/**
 * OAuth for /mcp, as a new user's MCP client meets it: the official SDK client with its
 * OAuth client provider, from nothing to tool calls, and the refusals the specifications name.
 */
let world: World
const clock = makeShiftableClock()

beforeAll(async () => {
  world = await startWorld("mcp-oauth", {
    smtp: true,
    twilio: true,
    provider: true,
    clock: clock.layer,
    env: { PROVIDER_FAKEPROV_API_KEY: "fake-secret-123" }
  })
})

afterAll(() => world?.close())

const mcpUrl = () => new URL(`${world.server.baseUrl}/mcp`)

const connectWith = async (provider: MemoryOAuthProvider) => {
  const client = new Client({ name: "oauth-test", version: "1.0.0" })
  await client.connect(new StreamableHTTPClientTransport(mcpUrl(), { authProvider: provider }))
  return client
}

const parsed = (result: any) => JSON.parse(result.content[0].text)

/** Runs the SDK's sign-in up to the authorization URL it would open in a browser. */
const startSignIn = async (provider: MemoryOAuthProvider) => {
  await expect(connectWith(provider)).rejects.toBeInstanceOf(UnauthorizedError)
  expect(provider.authorizationUrl).toBeDefined()
  return provider.authorizationUrl!
}

/** Consents in the browser with `form`; answers the code the client's redirect URI receives. */
const consent = async (
  browser: ReturnType<typeof makeBrowser>,
  interaction: string,
  form: Record<string, string>
) => {
  const decided = await browser.send(interaction, { form })
  expect(decided.status, decided.text).toBe(303)
  const back = await followToClient(browser, world, decided.location!)
  return back
}

describe("OAuth for /mcp", () => {
  it("connects the SDK client from nothing: metadata, registration, sign-in, consent, tools, refresh, revocation", async () => {
    const person = await owner(world, "Oauth Org")
    await topUp(world, OrgId.make(person.orgId), 5_000n)

    // The 401 names the protected-resource metadata, which names the authorization server.
    const refused = await request(mcpUrl().href, { method: "POST", body: {} })
    expect(refused.status).toBe(401)
    expect(refused.headers.get("www-authenticate")).toContain(
      `resource_metadata="${world.server.baseUrl}/.well-known/oauth-protected-resource/mcp"`
    )
    const resourceMetadata = (await request(`${world.server.baseUrl}/.well-known/oauth-protected-resource/mcp`)).json
    expect(resourceMetadata).toMatchObject({
      resource: `${world.server.baseUrl}/mcp`,
      authorization_servers: [`${world.server.baseUrl}/oauth`]
    })
    const serverMetadata = (await request(`${world.server.baseUrl}/.well-known/oauth-authorization-server/oauth`)).json
    expect(serverMetadata).toMatchObject({
      issuer: `${world.server.baseUrl}/oauth`,
      authorization_endpoint: `${world.server.baseUrl}/oauth/authorize`,
      token_endpoint: `${world.server.baseUrl}/oauth/token`,
      registration_endpoint: `${world.server.baseUrl}/oauth/register`,
      revocation_endpoint: `${world.server.baseUrl}/oauth/revoke`,
      code_challenge_methods_supported: ["S256"]
    })

    const provider = new MemoryOAuthProvider()
    const authorizationUrl = await startSignIn(provider)
    expect(provider.client?.client_id).toBeDefined()
    expect(authorizationUrl.searchParams.get("resource")).toBe(`${world.server.baseUrl}/mcp`)
    expect(authorizationUrl.searchParams.get("code_challenge_method")).toBe("S256")

    const browser = makeBrowser(world)
    const interaction = await openAuthorization(browser, authorizationUrl)
    const signInPage = await browser.send(interaction)
    expect(signInPage.text).toContain("Sign in to connect")
    const consentPage = await signInOnConsentPage(world, browser, interaction, person.email)
    expect(consentPage.text).toContain("Connect an agent")
    expect(consentPage.text).toContain("Oauth Org")

    const back = await consent(browser, interaction, {
      decision: "allow",
      choice: `${person.orgId}:new`,
      name: "Assistant",
      mode: "live",
      monthly_budget: "1000",
      approval_threshold: "500"
    })
    expect(back.origin + back.pathname).toBe(provider.redirect)
    const code = back.searchParams.get("code")!
    expect(await auth(provider, { serverUrl: mcpUrl(), authorizationCode: code })).toBe("AUTHORIZED")
    const firstTokens = provider.saved!
    expect(firstTokens.refresh_token).toBeDefined()
    expect(firstTokens.expires_in).toBeLessThanOrEqual(600)

    // The new agent, made on the consent page with the budget and threshold given there.
    const agents = await call(world, "GET", `/v1/orgs/${person.orgId}/agents`, { token: person.token })
    const agent = agents.json.agents.find((a: any) => a.name === "Assistant")
    expect(agent).toMatchObject({
      mode: "live",
      monthly_budget: { credits: "1000" },
      approval_threshold: { credits: "500" }
    })

    const client = await connectWith(provider)
    try {
      expect((await client.listTools()).tools.length).toBeGreaterThan(5)
      const search = parsed(await client.callTool({ name: "search_endpoints", arguments: { q: "fakeprov ok" } }))
      expect(search.endpoints.map((e: any) => e.id)).toContain("fakeprov/ok")
      const result = await client.callTool({
        name: "call_endpoint",
        arguments: { endpoint: "fakeprov/echo", body: { a: 1 } }
      })
      expect(parsed(result)).toMatchObject({ status: "succeeded", charged: { credits: "10" } })
      const balance = parsed(await client.callTool({ name: "get_balance", arguments: {} }))
      expect(balance).toMatchObject({ agent_id: agent.id, month_to_date_spend: { credits: "10" } })
    } finally {
      await client.close()
    }

    // The agent's page lists the client, with its last use.
    const listed = await call(world, "GET", `/v1/orgs/${person.orgId}/agents/${agent.id}/connections`, {
      token: person.token
    })
    expect(listed.status).toBe(200)
    expect(listed.json.connections).toHaveLength(1)
    const connection = listed.json.connections[0]
    expect(connection).toMatchObject({ client_name: "Test MCP client", connected_by: person.email, revoked_at: null })
    expect(connection.last_used_at).not.toBeNull()

    // Refresh: a new pair, and the old refresh token no longer works (rotation).
    expect(await auth(provider, { serverUrl: mcpUrl() })).toBe("AUTHORIZED")
    const refreshed = provider.saved!
    expect(refreshed.access_token).not.toBe(firstTokens.access_token)
    expect(refreshed.refresh_token).not.toBe(firstTokens.refresh_token)
    const reused = await tokenRequest({
      grant_type: "refresh_token",
      refresh_token: firstTokens.refresh_token!,
      client_id: provider.client!.client_id
    })
    expect(reused.status).toBe(400)
    expect(reused.json.error).toBe("invalid_grant")

    // Revoked from the agent's page: its tokens stop at once.
    const revoked = await call(
      world,
      "POST",
      `/v1/orgs/${person.orgId}/agents/${agent.id}/connections/${connection.id}/revoke`,
      { token: person.token }
    )
    expect(revoked.status).toBe(200)
    const after = await request(mcpUrl().href, {
      method: "POST",
      headers: {
        authorization: `Bearer ${provider.saved!.access_token}`,
        accept: "application/json, text/event-stream"
      },
      body: { jsonrpc: "2.0", id: 1, method: "tools/list" }
    })
    expect(after.status).toBe(401)
    expect(after.headers.get("www-authenticate")).toContain(`error="invalid_token"`)
    const refreshAfter = await tokenRequest({
      grant_type: "refresh_token",
      refresh_token: provider.saved!.refresh_token!,
      client_id: provider.client!.client_id
    })
    expect(refreshAfter.json.error).toBe("invalid_grant")
  })
})

const tokenRequest = async (form: Record<string, string>) => {
  const response = await fetch(`${world.server.baseUrl}/oauth/token`, {
    method: "POST",
    headers: { "content-type": "application/x-www-form-urlencoded" },
    body: new URLSearchParams(form).toString()
  })
  return { status: response.status, json: await response.json() as any }
}
