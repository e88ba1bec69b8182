import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { bearer, seedAgent, seedOrg } from "../support/fixtures.js"
import { expectError } from "../support/people.js"
import { request } from "../support/server.js"
import { startWorld, topUp, type World } from "../support/world.js"

/** `GET /v1/orgs/{orgId}/calls` filtered by part of an endpoint id and by a time range. */
let world: World

beforeAll(async () => {
  world = await startWorld("callfilters", { provider: true })
})

afterAll(() => world?.close())

describe("the calls list's filters", () => {
  it("finds calls by endpoint text in any case and by time range", async () => {
    const org = await seedOrg(world.db)
    const agent = await seedAgent(world.db, org.orgId, { mode: "live" })
    await topUp(world, org.orgId, 1_000n)
    for (const endpoint of ["fakeprov/ok", "fakeprov/empty", "fakeprov/ok"]) {
      const made = await request(`${world.server.url}/v1/call`, {
        method: "POST",
        headers: bearer(agent.key),
        body: { endpoint }
      })
      expect(made.status).toBe(200)
    }
    // The first call's time splits the range.
    await world.db.query(
      `UPDATE gateway_calls SET created_at = created_at - interval '2 days'
       WHERE id = (SELECT id FROM gateway_calls WHERE org_id = $1 ORDER BY created_at LIMIT 1)`,
      [org.orgId]
    )
    const list = async (query: string) => {
      const answer = await request(`${world.server.url}/v1/orgs/${org.orgId}/calls?${query}`, {
        headers: bearer(org.owner.sessionToken)
      })
      expect(answer.status, query).toBe(200)
      return (answer.json.calls as Array<{ endpoint: string }>).map((c) => c.endpoint)
    }
    expect(await list("endpoint_contains=OK")).toEqual(["fakeprov/ok", "fakeprov/ok"])
    expect(await list("endpoint_contains=prov/")).toHaveLength(3)
    expect(await list("endpoint_contains=%25")).toEqual([])
    const yesterday = new Date(Date.now() - 86_400_000).toISOString()
    expect(await list(`from=${yesterday}`)).toEqual(["fakeprov/ok", "fakeprov/empty"])
    expect(await list(`until=${yesterday}`)).toEqual(["fakeprov/ok"])
    expect(await list(`endpoint_contains=empty&until=${yesterday}`)).toEqual([])
    const bad = await request(`${world.server.url}/v1/orgs/${org.orgId}/calls?from=yesterday`, {
      headers: bearer(org.owner.sessionToken)
    })
    expect(bad.status).toBe(400)
  })

  it("answers 400 invalid_input for a cursor or agent id that is not one, decided by the query's schema", async () => {
    const org = await seedOrg(world.db)
    const list = (query: string) =>
      request(`${world.server.url}/v1/orgs/${org.orgId}/calls?${query}`, { headers: bearer(org.owner.sessionToken) })
    const unknown = "00000000-0000-4000-8000-000000000000"
    expectError(
      await list("starting_after=nope"),
      400,
      "invalid_input",
      "Invalid value for `starting_after`: not a call id"
    )
    expectError(
      await list(`starting_after=${unknown}`),
      400,
      "invalid_input",
      "`starting_after` is not a call of this org"
    )
    expectError(await list("agent_id=nope"), 400, "invalid_input", "Invalid value for `agent_id`: not an agent id")
    const none = await list(`agent_id=${unknown}`)
    expect(none.status).toBe(200)
    expect(none.json.calls).toEqual([])
  })
})
