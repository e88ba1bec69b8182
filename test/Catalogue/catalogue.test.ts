import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { placeholdersOf } from "../../src/Domain/Catalogue.js"
import { gatewayPrice } from "../../src/Domain/Plans.js"
import { seedAgent, seedOrg } from "../support/fixtures.js"
import { request } from "../support/server.js"
import { eventually, startWorld, type World } from "../support/world.js"

let world: World

beforeAll(async () => {
  world = await startWorld("catalogue")
})

afterAll(() => world?.close())

const endpoints = async (query = "") => {
  const res = await request(`${world.server.url}/v1/endpoints${query}`)
  expect(res.status, res.text).toBe(200)
  return res.json.endpoints as Array<any>
}

describe("the gateway catalogue", () => {
  it("has exactly 947 endpoints from 70 providers in the 12 categories, 840 live and 107 on request", async () => {
    const all = await endpoints()
    expect(all).toHaveLength(947)
    expect(new Set(all.map((e) => e.provider)).size).toBe(70)
    expect(new Set(all.map((e) => e.category))).toEqual(
      new Set([
        "people",
        "companies",
        "search",
        "scrape",
        "social",
        "finance",
        "brands",
        "ai",
        "utilities",
        "identity",
        "messaging",
        "compute"
      ])
    )
    expect(all.filter((e) => e.availability === "live")).toHaveLength(840)
    expect(all.filter((e) => e.availability === "on request")).toHaveLength(107)
  })

  it("answers every field of the spec's record, ids of the form provider/slug, placeholders matching path_params", async () => {
    for (const endpoint of await endpoints()) {
      expect(Object.keys(endpoint).sort()).toEqual(
        [
          "availability",
          "category",
          "id",
          "method",
          "name",
          "path",
          "path_params",
          "price_per_call",
          "provider",
          "provider_name"
        ]
      )
      expect(endpoint.id).toMatch(new RegExp(`^${endpoint.provider}/[a-z0-9-]+$`))
      expect(["GET", "POST", "PATCH", "DELETE"]).toContain(endpoint.method)
      expect(endpoint.path_params).toEqual(placeholdersOf(endpoint.path))
      expect(endpoint.price_per_call).toMatch(/^[1-9]\d*$/)
    }
  })

  it("puts the per-customer kinds in the categories the spec names", async () => {
    const onRequest = await endpoints("?availability=on%20request")
    const byCategory = new Map<string, number>()
    for (const e of onRequest) byCategory.set(e.category, (byCategory.get(e.category) ?? 0) + 1)
    const named = (byCategory.get("messaging") ?? 0) + (byCategory.get("compute") ?? 0) +
      (byCategory.get("identity") ?? 0)
    expect(named).toBeGreaterThan(onRequest.length / 2)
  })

  it("requires every word of q to match the id, provider or name, case-insensitively", async () => {
    const all = await endpoints()
    const matches = (e: any, word: string) =>
      [e.id, e.provider, e.provider_name, e.name].some((field: string) => field.toLowerCase().includes(word))
    for (const q of ["email finder", "STRIPE customer", "chat completion", "search", "zz-no-such-word"]) {
      const words = q.toLowerCase().split(" ")
      const expected = all.filter((e) => words.every((w) => matches(e, w))).map((e) => e.id)
      const got = (await endpoints(`?q=${encodeURIComponent(q)}`)).map((e) => e.id)
      expect(got, q).toEqual(expected)
    }
    expect((await endpoints("?q=email%20finder")).length).toBeGreaterThan(0)
    expect(await endpoints("?q=zz-no-such-word")).toEqual([])
  })

  it("filters by category, provider and availability together", async () => {
    const all = await endpoints()
    const got = await endpoints("?category=messaging&provider=twilio&availability=live")
    expect(got.map((e) => e.id)).toEqual(
      all.filter((e) => e.category === "messaging" && e.provider === "twilio" && e.availability === "live").map((e) =>
        e.id
      )
    )
    expect(got.length).toBeGreaterThan(0)
  })

  it("refuses an unknown category or availability with 400 invalid_input", async () => {
    for (const query of ["?category=weather", "?availability=maybe"]) {
      const res = await request(`${world.server.url}/v1/endpoints${query}`)
      expect(res.status).toBe(400)
      expect(res.json.error.code).toBe("invalid_input")
    }
  })

  it("prices for Pay as you go when anonymous, from the base price in the database", async () => {
    const [row] = await world.db.query(
      `SELECT id, base_price_credits FROM catalogue_endpoints WHERE id = 'hunter/email-finder'`
    )
    const [endpoint] = await endpoints("?q=hunter/email-finder")
    expect(endpoint.price_per_call).toBe(String(row.base_price_credits))
  })

  it("prices for the agent's org plan when an agent key is sent, and refuses a bad key", async () => {
    const [before] = await endpoints("?q=hunter/email-finder")
    await world.db.query(`UPDATE catalogue_endpoints SET base_price_credits = 25 WHERE id = 'hunter/email-finder'`)
    // Searches read the copy kept in memory (CATALOGUE_CACHE_MS, 60 s): the database's
    // change shows once the copy is read again, at once when the catalogue is loaded.
    expect((await endpoints("?q=hunter/email-finder"))[0].price_per_call).toBe(before.price_per_call)
    await world.restart()
    const expected = { payg: "25", pro: String(gatewayPrice(25n, "pro")), max: String(gatewayPrice(25n, "max")) }
    expect(new Set(Object.values(expected)).size).toBe(3)
    for (const plan of ["payg", "pro", "max"] as const) {
      const org = await seedOrg(world.db, { plan })
      const agent = await seedAgent(world.db, org.orgId, { mode: "test" })
      const res = await request(`${world.server.url}/v1/endpoints?q=hunter/email-finder`, {
        headers: { authorization: `Bearer ${agent.key}` }
      })
      expect(res.status, res.text).toBe(200)
      expect(res.json.endpoints[0].price_per_call).toBe(expected[plan])
      // Without a key, a plan can be named (the dashboard shows its org's prices this way).
      const [named] = await endpoints(`?q=hunter/email-finder&plan=${plan}`)
      expect(named.price_per_call).toBe(expected[plan])
    }
    expect((await request(`${world.server.url}/v1/endpoints?plan=gold`)).status).toBe(400)
    const bad = await request(`${world.server.url}/v1/endpoints`, {
      headers: { authorization: "Bearer sk_live_notakey" }
    })
    expect(bad.status).toBe(401)
    expect(bad.json.error.code).toBe("unauthenticated")
  })

  it("reads the database again once the copy in memory is CATALOGUE_CACHE_MS old", async () => {
    await world.restart({ CATALOGUE_CACHE_MS: "300" })
    await endpoints("?q=hunter/email-finder")
    await world.db.query(`UPDATE catalogue_endpoints SET base_price_credits = 31 WHERE id = 'hunter/email-finder'`)
    await eventually(async () => (await endpoints("?q=hunter/email-finder"))[0].price_per_call === "31", {
      timeoutMs: 10_000,
      what: "the new price"
    })
  })

  it("keeps a price changed in the database when the catalogue is loaded again", async () => {
    await world.db.query(`UPDATE catalogue_endpoints SET base_price_credits = 777 WHERE id = 'hunter/email-finder'`)
    await world.restart()
    const [endpoint] = await endpoints("?q=hunter/email-finder")
    expect(endpoint.price_per_call).toBe("777")
    expect(await endpoints()).toHaveLength(947)
  })
})
