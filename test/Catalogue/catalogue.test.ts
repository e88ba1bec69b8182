import { expect, layer } from "@effect/vitest"
import { Duration, Effect, Layer, TestClock, TestContext } from "effect"
import type { CatalogueEndpointJson } from "../../src/Domain/Catalogue.js"
import { placeholdersOf } from "../../src/Domain/Catalogue.js"
import { gatewayPrice, type PlanId } from "../../src/Domain/Plans.js"
import { Catalogue, type EndpointQuery } from "../../src/Services/Catalogue/Catalogue.js"
import { agentOf, seedAgent, seedOrg } from "../support/fixtures.js"
import { serviceTier, SuiteDatabase } from "../support/testLayers.js"

/**
 * The gateway catalogue's rules on its service, over the suite's database (a clone of the
 * run's template, where the catalogue is loaded from ./data as the service loads it at
 * start): what it holds, search, filters, the price for a plan, and the copy kept in memory
 * (CATALOGUE_CACHE_MS, on the TestClock). The public route's answers (`GET /v1/endpoints`:
 * status, codes, an agent key's plan) are the Http family's wire suite's (`test/Http/wire/catalogue.ts`).
 */
const search = (query: EndpointQuery = {}, plan: PlanId = "payg") =>
  Effect.flatMap(Catalogue, (catalogue) => catalogue.search(query, plan))

const setBasePrice = (credits: number) =>
  Effect.flatMap(
    SuiteDatabase,
    (db) =>
      Effect.promise(() =>
        db.query(`UPDATE catalogue_endpoints SET base_price_credits = $1 WHERE id = 'hunter/email-finder'`, [credits])
      )
  )

const hunterPrice = (plan: PlanId = "payg") =>
  Effect.map(search({ q: "hunter/email-finder" }, plan), ([endpoint]) => endpoint!.price_per_call)

const matches = (e: CatalogueEndpointJson, word: string) =>
  [e.id, e.provider, e.provider_name, e.name].some((field) => field.toLowerCase().includes(word))

// TestContext given here: a suite's fork may have lost its test services to an earlier suite.
layer(serviceTier("catalogue", Catalogue.Default).pipe(Layer.provideMerge(TestContext.TestContext)))((it) => {
  it.effect("has exactly 947 endpoints from 70 providers in the 12 categories, 840 live and 107 on request", () =>
    Effect.gen(function*() {
      const all = yield* search()
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
    }))

  it.effect("answers every field of the spec's record, ids of the form provider/slug, placeholders matching path_params", () =>
    Effect.gen(function*() {
      for (const endpoint of yield* search()) {
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
    }))

  it.effect("puts the per-customer kinds in the categories the spec names", () =>
    Effect.gen(function*() {
      const onRequest = yield* search({ availability: "on request" })
      const byCategory = new Map<string, number>()
      for (const e of onRequest) byCategory.set(e.category, (byCategory.get(e.category) ?? 0) + 1)
      const named = (byCategory.get("messaging") ?? 0) + (byCategory.get("compute") ?? 0) +
        (byCategory.get("identity") ?? 0)
      expect(named).toBeGreaterThan(onRequest.length / 2)
    }))

  it.effect("requires every word of q to match the id, provider or name, case-insensitively", () =>
    Effect.gen(function*() {
      const all = yield* search()
      for (const q of ["email finder", "STRIPE customer", "chat completion", "search", "zz-no-such-word"]) {
        const words = q.toLowerCase().split(" ")
        const expected = all.filter((e) => words.every((w) => matches(e, w))).map((e) => e.id)
        const got = (yield* search({ q })).map((e) => e.id)
        expect(got, q).toEqual(expected)
      }
      expect((yield* search({ q: "email finder" })).length).toBeGreaterThan(0)
      expect(yield* search({ q: "zz-no-such-word" })).toEqual([])
    }))

  it.effect("filters by category, provider and availability together", () =>
    Effect.gen(function*() {
      const all = yield* search()
      const got = yield* search({ category: "messaging", provider: "twilio", availability: "live" })
      expect(got.map((e) => e.id)).toEqual(
        all.filter((e) => e.category === "messaging" && e.provider === "twilio" && e.availability === "live").map((
          e
        ) => e.id)
      )
      expect(got.length).toBeGreaterThan(0)
    }))

  it.effect("prices for Pay as you go, from the base price in the database", () =>
    Effect.gen(function*() {
      const db = yield* SuiteDatabase
      const [row] = yield* Effect.promise(() =>
        db.query(`SELECT id, base_price_credits FROM catalogue_endpoints WHERE id = 'hunter/email-finder'`)
      )
      expect(yield* hunterPrice("payg")).toBe(String(row.base_price_credits))
    }))

  it.effect("prices for each plan, and for the plan of an agent's org, from the copy in memory until the catalogue is loaded again", () =>
    Effect.gen(function*() {
      const db = yield* SuiteDatabase
      const catalogue = yield* Catalogue
      const before = yield* hunterPrice()
      yield* setBasePrice(25)
      // Searches read the copy kept in memory (CATALOGUE_CACHE_MS, 60 s): the database's
      // change shows once the copy is read again, at once when the catalogue is loaded.
      expect(yield* hunterPrice()).toBe(before)
      yield* catalogue.load
      const expected = { payg: "25", pro: String(gatewayPrice(25n, "pro")), max: String(gatewayPrice(25n, "max")) }
      expect(new Set(Object.values(expected)).size).toBe(3)
      for (const plan of ["payg", "pro", "max"] as const) {
        const org = yield* Effect.promise(() => seedOrg(db, { plan }))
        const seeded = yield* Effect.promise(() => seedAgent(db, org.orgId, { mode: "test" }))
        // The plan an agent's key carries is its org's.
        const agent = yield* Effect.promise(() => agentOf(db, seeded.agentId))
        expect(agent.org_plan).toBe(plan)
        expect(yield* hunterPrice(agent.org_plan)).toBe(expected[plan])
      }
    }))

  it.effect("keeps a price changed in the database when the catalogue is loaded again", () =>
    Effect.gen(function*() {
      const catalogue = yield* Catalogue
      yield* setBasePrice(777)
      expect(yield* catalogue.load).toEqual({ providers: 70, endpoints: 947 })
      expect(yield* hunterPrice()).toBe("777")
      expect(yield* search()).toHaveLength(947)
    }))
})

layer(
  serviceTier("catalogue_cache", Catalogue.Default, { CATALOGUE_CACHE_MS: "300" }).pipe(
    Layer.provideMerge(TestContext.TestContext)
  )
)((it) => {
  it.effect("reads the database again once the copy in memory is CATALOGUE_CACHE_MS old", () =>
    Effect.gen(function*() {
      const before = yield* hunterPrice()
      yield* setBasePrice(31)
      yield* TestClock.adjust(Duration.millis(299))
      expect(yield* hunterPrice()).toBe(before)
      yield* TestClock.adjust(Duration.millis(2))
      expect(yield* hunterPrice()).toBe("31")
    }))
})
