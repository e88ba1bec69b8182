import { expect, it } from "vitest"
import { gatewayPrice } from "../../../src/Domain/Plans.js"
import { bearer, seedAgent, seedOrg } from "../../support/fixtures.js"
import { request } from "../../support/server.js"
import { base, world } from "./world.js"

/**
 * The gateway catalogue's public route on the wire (`GET /v1/endpoints`): its answer, the
 * plan it prices for (an agent key's org plan, a plan named, else Pay as you go) and its
 * refusals. What the catalogue holds, search and filters are the catalogue service's suite's
 * (`test/Catalogue/catalogue.test.ts`).
 */
const endpoints = (query = "", headers: Record<string, string> = {}) =>
  request(`${world.server.url}/v1/endpoints${query}`, { headers })

const expectInvalidInput = (res: { status: number; json: any }, what: string) => {
  expect(res.status, what).toBe(400)
  expect(res.json.error.code, what).toBe("invalid_input")
  expect(res.json.error.doc_url, what).toBe(`${base}/docs/errors#invalid_input`)
}

export const catalogueCases = () => {
  it("answers the endpoints found as JSON, each the spec's record", async () => {
    const res = await endpoints("?q=hunter/email-finder")
    expect(res.status, res.text).toBe(200)
    expect(res.headers.get("content-type")).toContain("application/json")
    expect(Object.keys(res.json)).toEqual(["endpoints"])
    expect(res.json.endpoints).toEqual([
      expect.objectContaining({
        id: "hunter/email-finder",
        provider: "hunter",
        provider_name: expect.any(String),
        price_per_call: expect.stringMatching(/^[1-9]\d*$/),
        path_params: expect.any(Array)
      })
    ])
  })

  it("refuses an unknown category or availability with 400 invalid_input", async () => {
    for (const query of ["?category=weather", "?availability=maybe"]) {
      expectInvalidInput(await endpoints(query), query)
    }
  })

  it("prices for the agent's org plan when an agent key is sent, or for the plan named, and refuses an unknown plan and a bad key", async () => {
    const [row] = await world.db.query(
      `SELECT base_price_credits FROM catalogue_endpoints WHERE id = 'hunter/email-finder'`
    )
    const base = BigInt(row.base_price_credits)
    const anonymous = await endpoints("?q=hunter/email-finder")
    expect(anonymous.json.endpoints[0].price_per_call).toBe(String(gatewayPrice(base, "payg")))
    for (const plan of ["pro", "max"] as const) {
      const org = await seedOrg(world.db, { plan })
      const agent = await seedAgent(world.db, org.orgId, { mode: "test" })
      const keyed = await endpoints("?q=hunter/email-finder", bearer(agent.key))
      expect(keyed.status, keyed.text).toBe(200)
      expect(keyed.json.endpoints[0].price_per_call).toBe(String(gatewayPrice(base, plan)))
      // Without a key, a plan can be named (the dashboard shows its org's prices this way).
      const named = await endpoints(`?q=hunter/email-finder&plan=${plan}`)
      expect(named.json.endpoints[0].price_per_call).toBe(String(gatewayPrice(base, plan)))
    }
    expectInvalidInput(await endpoints("?plan=gold"), "plan=gold")
    const bad = await endpoints("", { authorization: "Bearer sk_live_notakey" })
    expect(bad.status).toBe(401)
    expect(bad.json.error.code).toBe("unauthenticated")
  })
}
