import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { createTestDatabase, type TestDatabase } from "../support/database.js"
import { bearer, seedAgent, seedOrg } from "../support/fixtures.js"
import { request, startServer, type TestServer } from "../support/server.js"
import { type LedgerRuntime, ledgerRuntime, topUp } from "../support/world.js"

/**
 * The built-in sandbox provider (PROVIDERS_SANDBOX=true, the default when DATABASE_URL is
 * unset) answers every live catalogue endpoint with plausible, deterministic data, and
 * the providers' daily caps are published.
 */
let db: TestDatabase
let server: TestServer
let ledger: LedgerRuntime

beforeAll(async () => {
  db = await createTestDatabase("sandbox")
  server = await startServer({ DATABASE_URL: db.url, PROVIDERS_SANDBOX: "true" })
  ledger = ledgerRuntime(db)
})

afterAll(async () => {
  await server?.close()
  await ledger?.dispose()
  await db?.drop()
})

describe("sandbox provider", () => {
  it("answers every live endpoint of the catalogue, the same call the same way", async () => {
    const org = await seedOrg(db)
    await topUp({ ledger }, org.orgId, 10_000_000n)
    // Several keys: the catalogue has more live endpoints than one key's 600 requests a minute.
    const agents = await Promise.all(
      [0, 1, 2].map(() => seedAgent(db, org.orgId, { mode: "live", monthlyBudgetCredits: 10_000_000n }))
    )
    const agent = agents[0]!
    const { json: catalogue } = await request(`${server.url}/v1/endpoints?availability=live`)
    expect(catalogue.endpoints.length).toBeGreaterThan(0)
    // Every live endpoint through the gateway: each answers, charged its price.
    for (const [index, endpoint] of catalogue.endpoints.entries()) {
      const pathParams = Object.fromEntries(endpoint.path_params.map((name: string) => [name, `x-${name}`]))
      const input = endpoint.method === "GET"
        ? { query: { domain: "example.com", q: "ada" } }
        : { body: { domain: "example.com", q: "ada" } }
      const answer = await request(`${server.url}/v1/call`, {
        method: "POST",
        headers: bearer(agents[index % agents.length]!.key),
        body: { endpoint: endpoint.id, path_params: pathParams, ...input }
      })
      expect(answer.status, endpoint.id).toBe(200)
      expect(answer.json.status, endpoint.id).toBe("succeeded")
      expect(answer.json.charged.credits).toBe(endpoint.price_per_call)
      expect(answer.json.data.sandbox).toBe(true)
    }
    const people = catalogue.endpoints.find((e: any) =>
      e.category === "people" && e.method === "GET" && e.path_params.length === 0
    )
    if (people) {
      const call = () =>
        request(`${server.url}/v1/call`, {
          method: "POST",
          headers: bearer(agent.key),
          body: { endpoint: people.id, query: { domain: "acme.io" } }
        })
      const [first, second] = [await call(), await call()]
      expect(first.json.data).toEqual(second.json.data)
      expect(first.json.data.data.person.email).toMatch(/@acme\.io$/)
    }
  }, 240_000)

  it("publishes each provider's daily call cap", async () => {
    const { json, status } = await request(`${server.url}/v1/providers`)
    expect(status).toBe(200)
    expect(json.providers.length).toBe(70)
    for (const provider of json.providers) {
      expect(provider.daily_call_cap).toBeGreaterThan(0)
      expect(provider.endpoints).toBeGreaterThan(0)
    }
  })
})
