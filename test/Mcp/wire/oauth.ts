import { auth, UnauthorizedError } from "@modelcontextprotocol/sdk/client/auth.js"
import { Client } from "@modelcontextprotocol/sdk/client/index.js"
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js"
import { describe, expect, it } from "vitest"
import { OrgId } from "../../../src/Domain/Ids.js"
import { seedAgent, seedOrg } from "../../support/fixtures.js"
import { freshIp, joinAs, owner } from "../../support/people.js"
import { request } from "../../support/server.js"
import { call, eventually, topUp } from "../../support/world.js"
import {
  followToClient,
  makeBrowser,
  MemoryOAuthProvider,
  openAuthorization,
  pkcePair,
  signInOnConsentPage
} from "../oauthSupport.js"
import { clock, world } from "./worlds.js"

/**
 * OAuth for /mcp, as a new user's MCP client meets it: the official SDK client with its
 * OAuth client provider, from nothing to tool calls, and the refusals the specifications name.
 */

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

export const oauthCases = () => {
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
      const serverMetadata =
        (await request(`${world.server.baseUrl}/.well-known/oauth-authorization-server/oauth`)).json
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

      // Refresh: a new pair, which works.
      expect(await auth(provider, { serverUrl: mcpUrl() })).toBe("AUTHORIZED")
      const refreshed = provider.saved!
      expect(refreshed.access_token).not.toBe(firstTokens.access_token)
      expect(refreshed.refresh_token).not.toBe(firstTokens.refresh_token)
      const again = await connectWith(provider)
      expect((await again.listTools()).tools.length).toBeGreaterThan(5)
      await again.close()

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

  describe("OAuth refusals", () => {
    const redirect = "http://127.0.0.1:7777/callback"

    /** A registered client, a signed-in owner (with an org) and their browser. */
    const setUp = async () => {
      const person = await owner(world, "Refusals Org")
      const registered = await request(`${world.server.baseUrl}/oauth/register`, {
        method: "POST",
        body: { redirect_uris: [redirect], client_name: "Manual client", token_endpoint_auth_method: "none" }
      })
      expect(registered.status).toBe(201)
      const clientId: string = registered.json.client_id
      const browser = makeBrowser(world)
      return { person, clientId, browser }
    }

    const authorizeUrl = (clientId: string, params: Record<string, string | undefined>) => {
      const url = new URL(`${world.server.baseUrl}/oauth/authorize`)
      const all: Record<string, string | undefined> = {
        client_id: clientId,
        redirect_uri: redirect,
        response_type: "code",
        scope: "mcp",
        state: "s1",
        resource: `${world.server.baseUrl}/mcp`,
        ...params
      }
      for (const [key, value] of Object.entries(all)) if (value !== undefined) url.searchParams.set(key, value)
      return url
    }

    /** Authorizes and consents (signing in on the first page if needed); answers the code. */
    const codeFor = async (
      setup: Awaited<ReturnType<typeof setUp>>,
      challenge: string,
      choice = `${setup.person.orgId}:new`,
      mode = "test"
    ) => {
      const interaction = await openAuthorization(
        setup.browser,
        authorizeUrl(setup.clientId, { code_challenge: challenge, code_challenge_method: "S256" })
      )
      // The same client again in the same browser keeps its grant (and agent): no consent page.
      const straight = new URL(interaction, world.server.baseUrl)
      if (straight.origin + straight.pathname === redirect) return straight.searchParams.get("code")!
      const page = await setup.browser.send(interaction)
      if (page.text.includes("Sign in to connect")) {
        await signInOnConsentPage(world, setup.browser, interaction, setup.person.email)
      }
      const back = await consent(setup.browser, interaction, {
        decision: "allow",
        choice,
        name: "Refusals agent",
        mode,
        monthly_budget: "1000",
        approval_threshold: ""
      })
      return back.searchParams.get("code")!
    }

    const exchange = (clientId: string, code: string, verifier: string | undefined, resource?: string) =>
      tokenRequest({
        grant_type: "authorization_code",
        code,
        redirect_uri: redirect,
        client_id: clientId,
        ...(verifier === undefined ? {} : { code_verifier: verifier }),
        ...(resource === undefined ? {} : { resource })
      })

    const mcpWith = (accessToken: string) =>
      request(`${world.server.url}/mcp`, {
        method: "POST",
        headers: { authorization: `Bearer ${accessToken}`, accept: "application/json, text/event-stream" },
        body: { jsonrpc: "2.0", id: 1, method: "tools/list" }
      })

    it("refuses an authorization request without PKCE, and one for another resource", async () => {
      const { browser, clientId } = await setUp()
      const withoutPkce = await browser.send(authorizeUrl(clientId, {}))
      const noPkce = new URL(withoutPkce.location!)
      expect(noPkce.origin + noPkce.pathname).toBe(redirect)
      expect(noPkce.searchParams.get("error")).toBe("invalid_request")
      expect(noPkce.searchParams.get("error_description")).toMatch(/PKCE/i)

      const { challenge } = pkcePair()
      const plain = await browser.send(
        authorizeUrl(clientId, { code_challenge: challenge, code_challenge_method: "plain" })
      )
      expect(new URL(plain.location!).searchParams.get("error")).toBe("invalid_request")

      const elsewhere = await browser.send(
        authorizeUrl(clientId, {
          code_challenge: challenge,
          code_challenge_method: "S256",
          resource: "https://elsewhere.example/mcp"
        })
      )
      expect(new URL(elsewhere.location!).searchParams.get("error")).toBe("invalid_target")
    })

    it("refuses a wrong verifier, a code used twice (revoking what it gave), another audience, and expired tokens", async () => {
      const setup = await setUp()
      const first = pkcePair()
      const code = await codeFor(setup, first.challenge)

      const missingVerifier = await exchange(setup.clientId, code, undefined)
      expect(missingVerifier.json.error).toBe("invalid_grant")

      // Each refusal on a code of its own.
      const second = pkcePair()
      const code2 = await codeFor(setup, second.challenge)
      const wrongVerifier = await exchange(setup.clientId, code2, first.verifier)
      expect(wrongVerifier.json.error).toBe("invalid_grant")

      const third = pkcePair()
      const code3 = await codeFor(setup, third.challenge)
      const otherAudience = await exchange(setup.clientId, code3, third.verifier, "https://elsewhere.example/mcp")
      expect(otherAudience.status).toBe(400)
      expect(otherAudience.json.error).toBe("invalid_target")

      const fourth = pkcePair()
      const code4 = await codeFor(setup, fourth.challenge)
      const tokens = await exchange(setup.clientId, code4, fourth.verifier)
      expect(tokens.status).toBe(200)
      expect(tokens.json).toMatchObject({ token_type: "Bearer", scope: "mcp" })
      expect((await mcpWith(tokens.json.access_token)).status).toBe(200)
      const reused = await exchange(setup.clientId, code4, fourth.verifier)
      expect(reused.status).toBe(400)
      expect(reused.json.error).toBe("invalid_grant")
      // A code used twice revokes the tokens it gave (RFC 6749 section 4.1.2), and the agent's page says so.
      expect((await mcpWith(tokens.json.access_token)).status).toBe(401)
      const { agents } =
        (await call(world, "GET", `/v1/orgs/${setup.person.orgId}/agents`, { token: setup.person.token }))
          .json
      const connected = await call(
        world,
        "GET",
        `/v1/orgs/${setup.person.orgId}/agents/${agents.find((a: any) => a.name === "Refusals agent").id}/connections`,
        { token: setup.person.token }
      )
      expect(connected.json.connections).toHaveLength(1)
      expect(connected.json.connections[0].revoked_at).not.toBeNull()

      const fifth = pkcePair()
      const code5 = await codeFor(setup, fifth.challenge)
      const fresh = await exchange(setup.clientId, code5, fifth.verifier)
      expect((await mcpWith(fresh.json.access_token)).status).toBe(200)
      // An opaque access token is its own record's id.
      const accessTokenRows = () =>
        world.db.query(`SELECT 1 FROM oauth_records WHERE model = 'AccessToken' AND id = $1`, [fresh.json.access_token])
      expect(await accessTokenRows()).toHaveLength(1)
      clock.advance("11 minutes")
      const expired = await mcpWith(fresh.json.access_token)
      expect(expired.status).toBe(401)
      expect(expired.headers.get("www-authenticate")).toContain(`error="invalid_token"`)

      // Refresh tokens rotate; one used twice revokes the grant, with the tokens the first use gave.
      const rotated = await tokenRequest({
        grant_type: "refresh_token",
        refresh_token: fresh.json.refresh_token,
        client_id: setup.clientId
      })
      expect(rotated.status).toBe(200)
      expect((await mcpWith(rotated.json.access_token)).status).toBe(200)
      const replayed = await tokenRequest({
        grant_type: "refresh_token",
        refresh_token: fresh.json.refresh_token,
        client_id: setup.clientId
      })
      expect(replayed.status).toBe(400)
      expect(replayed.json.error).toBe("invalid_grant")
      expect((await mcpWith(rotated.json.access_token)).status).toBe(401)
      // The sweep deletes what expired.
      await eventually(async () => (await accessTokenRows()).length === 0, {
        timeoutMs: 10_000,
        what: "the expired access token swept"
      })
    })

    it("lets only one of two token requests at the same moment use a code or a refresh token, and revokes the grant", async () => {
      const setup = await setUp()
      const { agentId } = await seedAgent(world.db, setup.person.orgId)
      const choice = `${setup.person.orgId}:${agentId}`
      // Each race on a fresh grant; a single race could end one-to-one by chance.
      for (let race = 0; race < 5; race++) {
        const pair = pkcePair()
        const code = await codeFor(setup, pair.challenge, choice)
        const answers = await Promise.all([
          exchange(setup.clientId, code, pair.verifier),
          exchange(setup.clientId, code, pair.verifier)
        ])
        expect(answers.map((answer) => answer.status).sort(), `code race ${race}`).toEqual([200, 400])
        const won = answers.find((answer) => answer.status === 200)!
        expect(answers.find((answer) => answer.status === 400)!.json.error).toBe("invalid_grant")
        // The code was used twice: what it gave stops working (RFC 9700 section 4.14).
        expect((await mcpWith(won.json.access_token)).status, `code race ${race}`).toBe(401)
        const refreshed = await tokenRequest({
          grant_type: "refresh_token",
          refresh_token: won.json.refresh_token,
          client_id: setup.clientId
        })
        expect(refreshed.json.error).toBe("invalid_grant")
      }

      for (let race = 0; race < 5; race++) {
        const pair = pkcePair()
        const code = await codeFor(setup, pair.challenge, choice)
        const tokens = await exchange(setup.clientId, code, pair.verifier)
        expect(tokens.status).toBe(200)
        const refresh = () =>
          tokenRequest({
            grant_type: "refresh_token",
            refresh_token: tokens.json.refresh_token,
            client_id: setup.clientId
          })
        const answers = await Promise.all([refresh(), refresh()])
        expect(answers.map((answer) => answer.status).sort(), `refresh race ${race}`).toEqual([200, 400])
        const won = answers.find((answer) => answer.status === 200)!
        expect(answers.find((answer) => answer.status === 400)!.json.error).toBe("invalid_grant")
        // A refresh token reused revokes the grant: the pair the other use got is dead too.
        expect((await mcpWith(won.json.access_token)).status, `refresh race ${race}`).toBe(401)
        expect((await mcpWith(tokens.json.access_token)).status).toBe(401)
        const again = await tokenRequest({
          grant_type: "refresh_token",
          refresh_token: won.json.refresh_token,
          client_id: setup.clientId
        })
        expect(again.json.error).toBe("invalid_grant")
      }
    })

    it("gives a test agent's token no live spending, and no other org's agent whatever ids are posted", async () => {
      const setup = await setUp()
      await topUp(world, OrgId.make(setup.person.orgId), 5_000n)
      const other = await seedOrg(world.db)
      const othersAgent = await seedAgent(world.db, other.orgId, { mode: "live" })

      // Another org, or another org's agent under the person's own org: not found, and no code.
      const { challenge } = pkcePair()
      const interaction = await openAuthorization(
        setup.browser,
        authorizeUrl(setup.clientId, { code_challenge: challenge, code_challenge_method: "S256" })
      )
      await signInOnConsentPage(world, setup.browser, interaction, setup.person.email)
      for (const choice of [`${other.orgId}:${othersAgent.agentId}`, `${setup.person.orgId}:${othersAgent.agentId}`]) {
        const refused = await setup.browser.send(interaction, { form: { decision: "allow", choice } })
        expect(refused.status, choice).toBe(404)
        expect(refused.location).toBeNull()
      }
      // A form from another site is refused before anything is read.
      const crossSite = await fetch(new URL(interaction, world.server.baseUrl), {
        method: "POST",
        headers: {
          "content-type": "application/x-www-form-urlencoded",
          origin: "https://evil.example",
          cookie: [...setup.browser.jar].map(([k, v]) => `${k}=${v}`).join("; ")
        },
        body: new URLSearchParams({ decision: "allow", choice: `${setup.person.orgId}:new` }).toString(),
        redirect: "manual"
      })
      expect(crossSite.status).toBe(403)

      const pair = pkcePair()
      const code = await codeFor(setup, pair.challenge, `${setup.person.orgId}:new`, "test")
      const tokens = await exchange(setup.clientId, code, pair.verifier)
      const provider = new MemoryOAuthProvider()
      provider.saved = tokens.json
      const seenBefore = world.fake.seen.length
      const client = await connectWith(provider)
      try {
        const before = parsed(await client.callTool({ name: "get_balance", arguments: {} }))
        const result = parsed(
          await client.callTool({ name: "call_endpoint", arguments: { endpoint: "fakeprov/echo", body: { a: 1 } } })
        )
        // A test agent checks and prices the call without making it: the sandbox sample, nothing spent.
        expect(result).toMatchObject({ sample: true, data: { sandbox: true } })
        expect(world.fake.seen.length).toBe(seenBefore)
        const balance = parsed(await client.callTool({ name: "get_balance", arguments: {} }))
        expect(balance).toMatchObject({ mode: "test", org_credits: before.org_credits })
      } finally {
        await client.close()
      }
    })

    it("lets only an owner connect an org's agent, and a denial reaches the client as access_denied", async () => {
      const setup = await setUp()
      const member = await joinAs(world, setup.person.token, setup.person.orgId, "member")
      const { challenge } = pkcePair()
      const url = authorizeUrl(setup.clientId, { code_challenge: challenge, code_challenge_method: "S256" })

      const memberBrowser = makeBrowser(world)
      const memberInteraction = await openAuthorization(memberBrowser, url)
      const memberPage = await signInOnConsentPage(world, memberBrowser, memberInteraction, member.email)
      // The org is not offered to a member, and posting it anyway is refused.
      expect(memberPage.text).not.toContain("Refusals Org")
      const refused = await memberBrowser.send(memberInteraction, {
        form: { decision: "allow", choice: `${setup.person.orgId}:new`, monthly_budget: "10", approval_threshold: "" }
      })
      expect(refused.status).toBe(403)
      expect(refused.text).toContain("Only an org owner can do this")

      const interaction = await openAuthorization(setup.browser, url)
      await signInOnConsentPage(world, setup.browser, interaction, setup.person.email)
      const denied = await setup.browser.send(interaction, { form: { decision: "deny" } })
      const back = await followToClient(setup.browser, world, denied.location!)
      expect(back.searchParams.get("error")).toBe("access_denied")
      expect(back.searchParams.get("code")).toBeNull()
    })

    it("registers only redirect URIs that are HTTPS or on a loopback address (RFC 7591's invalid_redirect_uri)", async () => {
      const ip = freshIp()
      const register = (redirectUris: Array<string>) =>
        request(`${world.server.url}/oauth/register`, {
          method: "POST",
          headers: { "x-forwarded-for": ip },
          body: { redirect_uris: redirectUris, client_name: "Redirects", token_endpoint_auth_method: "none" }
        })
      for (
        const accepted of [
          ["https://app.example/cb"],
          ["http://127.0.0.1:7777/callback"],
          ["http://localhost:3000/cb"],
          ["http://[::1]:8080/cb"]
        ]
      ) {
        const answer = await register(accepted)
        expect(answer.status, accepted[0]).toBe(201)
        expect(answer.json.redirect_uris).toEqual(accepted)
      }
      for (
        const refused of [
          ["http://app.example/cb"],
          ["https://app.example/cb", "http://10.0.0.5/cb"],
          ["http://localhost.app.example/cb"],
          ["myapp://callback"]
        ]
      ) {
        const answer = await register(refused)
        expect(answer.status, refused.join(" ")).toBe(400)
        expect(answer.json.error, refused.join(" ")).toBe("invalid_redirect_uri")
      }
      const answer = await register(["http://app.example/cb"])
      expect(answer.json.error_description).toContain("http://app.example/cb")
    })

    it("limits dynamic registrations by address", async () => {
      const ip = freshIp()
      const register = () =>
        request(`${world.server.url}/oauth/register`, {
          method: "POST",
          headers: { "x-forwarded-for": ip },
          body: { redirect_uris: [redirect], token_endpoint_auth_method: "none" }
        })
      for (let i = 0; i < 30; i++) expect((await register()).status).toBe(201)
      const refused = await register()
      expect(refused.status).toBe(429)
      expect(refused.json.error.code).toBe("rate_limited")
    })

    // Last: it restarts the world's service.
    it("keeps its records and keys in PostgreSQL across restarts, and makes new keys when the sealing key changes", async () => {
      const setup = await setUp()
      const pair = pkcePair()
      const code = await codeFor(setup, pair.challenge)
      const tokens = (await exchange(setup.clientId, code, pair.verifier)).json
      const keyId = async () => (await request(`${world.server.url}/oauth/jwks`)).json.keys[0].kid as string
      const firstKey = await keyId()
      // The same public address, so the tokens' audience is still this service's /mcp.
      const baseUrl = world.server.baseUrl
      await world.restart({ BASE_URL: baseUrl })
      expect((await mcpWith(tokens.access_token)).status).toBe(200)
      expect(await keyId()).toBe(firstKey)

      await world.restart({ BASE_URL: baseUrl, SECRETS_ENCRYPTION_KEY: "another sealing key" })
      expect(await keyId()).not.toBe(firstKey)
      // Tokens are records, not signatures: they outlive the keys.
      expect((await mcpWith(tokens.access_token)).status).toBe(200)
      const refreshed = await tokenRequest({
        grant_type: "refresh_token",
        refresh_token: tokens.refresh_token,
        client_id: setup.clientId
      })
      expect(refreshed.status).toBe(200)
      expect((await mcpWith(refreshed.json.access_token)).status).toBe(200)
    })
  })

  const tokenRequest = async (form: Record<string, string>) => {
    const response = await fetch(`${world.server.url}/oauth/token`, {
      method: "POST",
      headers: { "content-type": "application/x-www-form-urlencoded" },
      body: new URLSearchParams(form).toString()
    })
    return { status: response.status, json: await response.json() as any }
  }
}
