import { auth, UnauthorizedError } from "@modelcontextprotocol/sdk/client/auth.js"
import { Client } from "@modelcontextprotocol/sdk/client/index.js"
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js"
import { InvalidGrantError } from "@modelcontextprotocol/sdk/server/auth/errors.js"
import { createServer, type Server } from "node:http"
import type { AddressInfo } from "node:net"
import type { Browser } from "playwright-core"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { OrgId } from "../../src/Domain/Ids.js"
import { ensureDashboardBuilt, launchBrowser, newContext, openPage } from "../Dashboard/browser.js"
import { owner } from "../support/people.js"
import { request } from "../support/server.js"
import { startWorld, topUp, type World } from "../support/world.js"
import { consentSignInLink, MemoryOAuthProvider } from "./oauthSupport.js"

/**
 * The proof a person would give: the official MCP SDK client connects to /mcp from nothing,
 * and its authorization URL is opened in Chromium, where the owner signs in by mailed link
 * and consents for a new agent; the client then works, refreshes, and is refused once the
 * owner disconnects it on the agent's page of the dashboard.
 */
let world: World
let browser: Browser
let callback: Server
const received: Array<URL> = []

beforeAll(async () => {
  await ensureDashboardBuilt()
  world = await startWorld("mcp-oauth-browser", {
    smtp: true,
    twilio: true,
    provider: true,
    env: { PROVIDER_FAKEPROV_API_KEY: "fake-secret-123" }
  })
  browser = await launchBrowser()
  // The client's redirect URI: a loopback server, as a desktop MCP client runs.
  callback = createServer((req, res) => {
    received.push(new URL(req.url ?? "/", "http://127.0.0.1"))
    res.end("You can close this window.")
  })
  await new Promise<void>((resolve) => callback.listen(0, "127.0.0.1", resolve))
})

afterAll(async () => {
  await browser?.close()
  await world?.close()
  await new Promise((resolve) => callback?.close(resolve))
})

const parsed = (result: any) => JSON.parse(result.content[0].text)

describe("OAuth for /mcp in a browser", () => {
  it("signs in by mailed link, consents for a new agent, works, refreshes, and stops when disconnected", async () => {
    const person = await owner(world, "Browser Org")
    await topUp(world, OrgId.make(person.orgId), 5_000n)
    const mcpUrl = new URL(`${world.server.baseUrl}/mcp`)
    const provider = new MemoryOAuthProvider(`http://127.0.0.1:${(callback.address() as AddressInfo).port}/callback`)
    const connect = async () => {
      const client = new Client({ name: "browser-test", version: "1.0.0" })
      await client.connect(new StreamableHTTPClientTransport(mcpUrl, { authProvider: provider }))
      return client
    }
    await expect(connect()).rejects.toBeInstanceOf(UnauthorizedError)

    const context = await newContext(browser, world.server.baseUrl)
    const { dialogs, page, problems } = await openPage(context)
    await page.goto(provider.authorizationUrl!.href)
    await page.getByRole("heading", { name: "Sign in to connect" }).waitFor()
    const interaction = page.url()
    expect(interaction).toContain("/oauth/interaction/")
    const before = world.smtp.messages.length
    await page.getByLabel("Email address").fill(person.email)
    await page.getByRole("button", { name: "Mail me a sign-in link" }).click()
    await page.getByRole("heading", { name: "Check your mail" }).waitFor()
    // The mailed link opened in the same tab leads back to this step, signed in.
    await page.goto(await consentSignInLink(world, person.email, before))
    await page.getByRole("heading", { name: "Connect an agent" }).waitFor()
    expect(page.url()).toBe(interaction)
    await page.getByLabel("A new agent in Browser Org").check()
    await page.getByLabel("Name").fill("Chromium agent")
    await page.getByLabel("Mode").selectOption("live")
    await page.getByLabel("Monthly budget (credits)").fill("2000")
    await page.getByLabel(/Ask for approval above/).fill("300")
    await page.getByRole("button", { name: "Allow" }).click()
    await page.waitForURL(/127\.0\.0\.1:\d+\/callback/)
    const answer = received.find((url) => url.pathname === "/callback")!
    expect(answer.searchParams.get("error")).toBeNull()
    const code = answer.searchParams.get("code")!
    expect(code).toBeTruthy()

    expect(await auth(provider, { serverUrl: mcpUrl, authorizationCode: code })).toBe("AUTHORIZED")
    const client = await connect()
    const search = parsed(await client.callTool({ name: "search_endpoints", arguments: { q: "fakeprov" } }))
    expect(search.endpoints.length).toBeGreaterThan(0)
    const called = await client.callTool({ name: "call_endpoint", arguments: { endpoint: "fakeprov/echo" } })
    expect(parsed(called)).toMatchObject({ status: "succeeded", charged: { credits: "10" } })
    await client.close()

    const firstAccess = provider.saved!.access_token
    expect(await auth(provider, { serverUrl: mcpUrl })).toBe("AUTHORIZED")
    expect(provider.saved!.access_token).not.toBe(firstAccess)

    // The owner disconnects the client on the agent's page.
    await page.goto(`/dashboard/orgs/${person.orgId}/agents`)
    const section = page.getByTestId("connections-Chromium agent")
    await section.locator("summary").click()
    await section.getByRole("cell", { name: "Test MCP client" }).waitFor()
    await section.getByRole("button", { name: "Disconnect" }).click()
    // Asked in the page (a dialog of its own), not with the browser's confirm().
    const asked = page.getByRole("dialog", { name: "Disconnect" })
    expect(await asked.textContent()).toContain(
      "Disconnect Test MCP client from Chromium agent? Its tokens stop at once."
    )
    await asked.getByRole("button", { name: "Disconnect" }).click()
    expect(dialogs).toEqual([])
    await section.getByText("No MCP client signed in as this agent").waitFor()

    const refused = await request(mcpUrl.href, {
      method: "POST",
      headers: {
        authorization: `Bearer ${provider.saved!.access_token}`,
        accept: "application/json, text/event-stream"
      },
      body: { jsonrpc: "2.0", id: 1, method: "tools/list" }
    })
    expect(refused.status).toBe(401)
    // The SDK client, refused, cannot refresh either (the grant is gone): it must sign in again.
    await expect(connect()).rejects.toBeInstanceOf(InvalidGrantError)
    expect(problems).toEqual([])
    await context.close()
  })
})
