import { expect, layer } from "@effect/vitest"
import { Effect, Layer } from "effect"
import { Catalogue } from "../../src/Services/Catalogue/Catalogue.js"
import { CallLog } from "../../src/Services/Gateway/CallLog.js"
import { Gateway } from "../../src/Services/Gateway/Gateway.js"
import { Ledger } from "../../src/Services/Ledger/Ledger.js"
import { agentOf, seedAgent, seedOrg } from "../support/fixtures.js"
import { GatewayServices, serviceTier, SuiteDatabase } from "../support/testLayers.js"

/**
 * The built-in sandbox provider (PROVIDERS_SANDBOX=true, the default when DATABASE_URL is
 * unset) answers every live catalogue endpoint with plausible, deterministic data, and
 * the providers' daily caps are published. On the gateway's and catalogue's services,
 * without HTTP (the wire of `POST /v1/call` is in gateway.test.ts).
 */
layer(
  serviceTier("sandbox", Layer.merge(GatewayServices, Catalogue.Default), { PROVIDERS_SANDBOX: "true" })
)((it) => {
  it.effect(
    "the sandbox answers every live endpoint of the catalogue, the same call the same way",
    () =>
      Effect.gen(function*() {
        const db = yield* SuiteDatabase
        const gateway = yield* Gateway
        const org = yield* Effect.promise(() => seedOrg(db))
        yield* (yield* Ledger).credit(org.orgId, 10_000_000n, "top_up", "test top-up")
        // Several agents, as over HTTP (the catalogue has more live endpoints than one key's
        // 600 requests a minute).
        const agents = yield* Effect.promise(() =>
          Promise.all(
            [0, 1, 2].map(async () =>
              agentOf(db, (await seedAgent(db, org.orgId, { mode: "live", monthlyBudgetCredits: 10_000_000n })).agentId)
            )
          )
        )
        const agent = agents[0]!
        const catalogue = yield* (yield* Catalogue).search({ availability: "live" }, "payg")
        expect(catalogue.length).toBeGreaterThan(0)
        // Every live endpoint through the gateway: each answers, charged its price.
        for (const [index, endpoint] of catalogue.entries()) {
          const pathParams = Object.fromEntries(endpoint.path_params.map((name) => [name, `x-${name}`]))
          const input = endpoint.method === "GET"
            ? { query: { domain: "example.com", q: "ada" } }
            : { body: { domain: "example.com", q: "ada" } }
          const answer = yield* gateway.call(agents[index % agents.length]!, {
            endpoint: endpoint.id,
            path_params: pathParams,
            ...input
          })
          expect(answer.status, endpoint.id).toBe("succeeded")
          expect(answer.charged.credits).toBe(endpoint.price_per_call)
          expect((answer.data as any).sandbox).toBe(true)
        }
        const people = catalogue.find((e) =>
          e.category === "people" && e.method === "GET" && e.path_params.length === 0
        )
        if (people) {
          const call = gateway.call(agent, { endpoint: people.id, query: { domain: "acme.io" } })
          const [first, second] = [yield* call, yield* call]
          expect(first.data).toEqual(second.data)
          expect((first.data as any).data.person.email).toMatch(/@acme\.io$/)
        }
      }),
    240_000
  )

  it.effect("publishes each provider's daily call cap", () =>
    Effect.gen(function*() {
      const { providers } = yield* (yield* CallLog).providers
      expect(providers.length).toBe(70)
      for (const provider of providers) {
        expect(provider.daily_call_cap).toBeGreaterThan(0)
        expect(provider.endpoints).toBeGreaterThan(0)
      }
    }))
})
