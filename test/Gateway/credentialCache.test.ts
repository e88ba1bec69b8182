import { PgClient } from "@effect/sql-pg"
import { ConfigProvider, Effect, Layer, ManagedRuntime, Redacted } from "effect"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { gatewayPrice } from "../../src/Domain/Plans.js"
import { Credentials } from "../../src/Services/Auth/Credentials.js"
import { StaleCredential } from "../../src/Services/Auth/CredentialsRepo.js"
import { bearer, seedAgent, seedOrg } from "../support/fixtures.js"
import { invariants } from "../support/ledgerChecks.js"
import { request } from "../support/server.js"
import { startWorld, topUp, type World } from "../support/world.js"

/**
 * A gateway call may take its agent key from the replica's cache; the hold checks it
 * again. Changes here are written straight into the database, as another replica (or an
 * administrator's command) would make them: nothing tells this replica's cache.
 */
let world: World

beforeAll(async () => {
  world = await startWorld("credential-cache", {
    provider: true,
    env: { PROVIDER_FAKEPROV_API_KEY: "fake-secret-123" }
  })
})

afterAll(() => world?.close())

const call = (key: string) =>
  request(`${world.server.url}/v1/call`, { method: "POST", headers: bearer(key), body: { endpoint: "fakeprov/ok" } })

const liveAgent = async () => {
  const org = await seedOrg(world.db)
  await topUp(world, org.orgId, 10_000n)
  const agent = await seedAgent(world.db, org.orgId, { mode: "live", monthlyBudgetCredits: 50_000n })
  expect((await call(agent.key)).status).toBe(200) // the key is now cached
  return { org, agent }
}

/** What a refused call left behind: nothing counted, held or logged. */
const leftBehind = async (orgId: string) =>
  (await world.db.query(
    `SELECT (SELECT COALESCE(sum(calls), 0)::int FROM provider_daily_calls WHERE org_id = $1) AS calls,
            (SELECT count(*)::int FROM gateway_calls WHERE org_id = $1) AS rows,
            (SELECT count(*)::int FROM ledger_holds WHERE org_id = $1) AS holds`,
    [orgId]
  ))[0]

describe("cached agent keys on POST /v1/call", () => {
  it("refuses a key revoked or rotated elsewhere at once, counting and holding nothing", async () => {
    const { agent, org } = await liveAgent()
    await world.db.query(`UPDATE agents SET key_hash = NULL WHERE id = $1`, [agent.agentId])
    const refused = await call(agent.key)
    expect(refused.status).toBe(401)
    expect(refused.json.error.code).toBe("unauthenticated")
    expect(await leftBehind(org.orgId)).toEqual({ calls: 1, rows: 1, holds: 1 })
    const inv = await invariants(world.db, org.orgId)
    expect(inv.entriesSum).toBe(inv.balance)
  })

  it("refuses a disabled agent at once, and serves it again once enabled", async () => {
    const { agent } = await liveAgent()
    await world.db.query(`UPDATE agents SET status = 'disabled' WHERE id = $1`, [agent.agentId])
    expect((await call(agent.key)).status).toBe(401)
    await world.db.query(`UPDATE agents SET status = 'active' WHERE id = $1`, [agent.agentId])
    expect((await call(agent.key)).status).toBe(200)
  })

  it("applies an allowlist changed elsewhere at once", async () => {
    const { agent } = await liveAgent()
    await world.db.query(`UPDATE agents SET ip_allowlist = '["203.0.113.0/24"]' WHERE id = $1`, [agent.agentId])
    const refused = await call(agent.key)
    expect(refused.status).toBe(403)
    expect(refused.json.error.code).toBe("ip_not_allowed")
  })

  it("prices a call at the org's plan as it is now", async () => {
    const { agent, org } = await liveAgent()
    await world.db.query(`UPDATE orgs SET plan = 'max' WHERE id = $1`, [org.orgId])
    const answer = await call(agent.key)
    expect(answer.status).toBe(200)
    expect(answer.json.charged.credits).toBe(gatewayPrice(10n, "max").toString())
  })

  it("a live agent switched to test mode elsewhere makes test calls at once", async () => {
    const { agent, org } = await liveAgent()
    const before = await leftBehind(org.orgId)
    await world.db.query(`UPDATE agents SET mode = 'test' WHERE id = $1`, [agent.agentId])
    const answer = await call(agent.key)
    expect(answer.status).toBe(200)
    expect(answer.json).toMatchObject({ status: "test", sample: true })
    expect((await leftBehind(org.orgId)).calls).toBe(before.calls)
  })
})

describe("the credential cache", () => {
  it("answers a live agent's key from memory for the calls that check it again, and never for others", async () => {
    const org = await seedOrg(world.db)
    const agent = await seedAgent(world.db, org.orgId, { mode: "live", name: "Before" })
    const runtime = ManagedRuntime.make(
      Credentials.Default.pipe(
        Layer.provide(PgClient.layer({ url: Redacted.make(world.db.url), maxConnections: 2 })),
        Layer.provide(Layer.setConfigProvider(ConfigProvider.fromMap(new Map([["LOG_LEVEL", "Warn"]]))))
      )
    )
    try {
      const authenticate = (cached: boolean) =>
        runtime.runPromise(
          Effect.flatMap(Credentials, (c) =>
            c.authenticateAgentKey(agent.key, "127.0.0.1", { cachedModes: cached ? ["live"] : [] }))
        )
      const first = await authenticate(true)
      expect(first.name).toBe("Before")
      expect(first.cached).toBeUndefined() // read from the database, now cached
      await world.db.query(`UPDATE agents SET name = 'After' WHERE id = $1`, [agent.agentId])
      const second = await authenticate(true)
      expect(second.name).toBe("Before")
      expect(second.cached?.key_hash).toMatch(/^[0-9a-f]{64}$/)
      expect((await authenticate(false)).name).toBe("After")
      // Read again after its check failed, the agent is what the database says.
      const fresh = await runtime.runPromise(
        Effect.flatMap(Credentials, (c) =>
          c.readAgainWhenStale(
            second,
            (agent) => agent.cached === undefined ? Effect.succeed(agent) : Effect.fail(new StaleCredential())
          ))
      )
      expect(fresh).toMatchObject({ name: "After" })
      expect(fresh.cached).toBeUndefined()
      expect((await authenticate(true)).name).toBe("After")
      // Kept for live calls, the row is not what an endpoint caching only test agents reads.
      await world.db.query(`UPDATE agents SET name = 'Later' WHERE id = $1`, [agent.agentId])
      const testOnly = await runtime.runPromise(
        Effect.flatMap(Credentials, (c) => c.authenticateAgentKey(agent.key, "127.0.0.1", { cachedModes: ["test"] }))
      )
      expect([testOnly.name, testOnly.cached]).toEqual(["Later", undefined])
    } finally {
      await runtime.dispose()
    }
  })

  it("keeps no refusal: an agent disabled when read is served as soon as it is enabled", async () => {
    const org = await seedOrg(world.db)
    const agent = await seedAgent(world.db, org.orgId, { mode: "live" })
    await world.db.query(`UPDATE agents SET status = 'disabled' WHERE id = $1`, [agent.agentId])
    const runtime = ManagedRuntime.make(
      Credentials.Default.pipe(
        Layer.provide(PgClient.layer({ url: Redacted.make(world.db.url), maxConnections: 2 })),
        Layer.provide(Layer.setConfigProvider(ConfigProvider.fromMap(new Map([["LOG_LEVEL", "Warn"]]))))
      )
    )
    try {
      const authenticate = () =>
        runtime.runPromise(
          Effect.either(
            Effect.flatMap(
              Credentials,
              (c) => c.authenticateAgentKey(agent.key, "127.0.0.1", { cachedModes: ["live"] })
            )
          )
        )
      const refused = await authenticate()
      expect(refused._tag === "Left" && refused.left._tag).toBe("unauthenticated")
      await world.db.query(`UPDATE agents SET status = 'active' WHERE id = $1`, [agent.agentId])
      const served = await authenticate()
      expect(served._tag === "Right" && served.right.cached).toBeUndefined() // read again, not from the cache
      const cached = await authenticate()
      expect(cached._tag === "Right" && cached.right.cached?.key_hash).toMatch(/^[0-9a-f]{64}$/)
    } finally {
      await runtime.dispose()
    }
  })
})
