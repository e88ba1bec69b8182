import { expect, layer } from "@effect/vitest"
import { Effect } from "effect"
import { Credentials } from "../../src/Services/Auth/Credentials.js"
import { StaleCredential } from "../../src/Services/Auth/CredentialsRepo.js"
import { seedAgent, seedOrg } from "../support/fixtures.js"
import { serviceTier, SuiteDatabase } from "../support/testLayers.js"

/**
 * The replica's cache of agent keys, on the Credentials service over the suite's database.
 * Changes are written straight into the database, as another replica (or an administrator's
 * command) would make them: nothing tells this replica's cache. What a gateway call does with
 * a key changed elsewhere is proven over the wire in gateway.test.ts.
 */
layer(serviceTier("credential-cache", Credentials.Default))((it) => {
  it.effect("answers a live agent's key from memory for the calls that check it again, and never for others", () =>
    Effect.gen(function*() {
      const db = yield* SuiteDatabase
      const credentials = yield* Credentials
      const org = yield* Effect.promise(() => seedOrg(db))
      const agent = yield* Effect.promise(() => seedAgent(db, org.orgId, { mode: "live", name: "Before" }))
      const rename = (name: string) =>
        Effect.promise(() => db.query(`UPDATE agents SET name = $2 WHERE id = $1`, [agent.agentId, name]))
      const authenticate = (cached: boolean) =>
        credentials.authenticateAgentKey(agent.key, "127.0.0.1", { cachedModes: cached ? ["live"] : [] })
      const first = yield* authenticate(true)
      expect(first.name).toBe("Before")
      expect(first.cached).toBeUndefined() // read from the database, now cached
      yield* rename("After")
      const second = yield* authenticate(true)
      expect(second.name).toBe("Before")
      expect(second.cached?.key_hash).toMatch(/^[0-9a-f]{64}$/)
      expect((yield* authenticate(false)).name).toBe("After")
      // Read again after its check failed, the agent is what the database says.
      const fresh = yield* credentials.readAgainWhenStale(
        second,
        (agent) => agent.cached === undefined ? Effect.succeed(agent) : Effect.fail(new StaleCredential())
      )
      expect(fresh).toMatchObject({ name: "After" })
      expect(fresh.cached).toBeUndefined()
      expect((yield* authenticate(true)).name).toBe("After")
      // Kept for live calls, the row is not what an endpoint caching only test agents reads.
      yield* rename("Later")
      const testOnly = yield* credentials.authenticateAgentKey(agent.key, "127.0.0.1", { cachedModes: ["test"] })
      expect([testOnly.name, testOnly.cached]).toEqual(["Later", undefined])
    }))

  it.effect("keeps no refusal: an agent disabled when read is served as soon as it is enabled", () =>
    Effect.gen(function*() {
      const db = yield* SuiteDatabase
      const credentials = yield* Credentials
      const org = yield* Effect.promise(() => seedOrg(db))
      const agent = yield* Effect.promise(() => seedAgent(db, org.orgId, { mode: "live" }))
      const setStatus = (status: string) =>
        Effect.promise(() => db.query(`UPDATE agents SET status = $2 WHERE id = $1`, [agent.agentId, status]))
      yield* setStatus("disabled")
      const authenticate = Effect.either(
        credentials.authenticateAgentKey(agent.key, "127.0.0.1", { cachedModes: ["live"] })
      )
      const refused = yield* authenticate
      expect(refused._tag === "Left" && refused.left._tag).toBe("unauthenticated")
      yield* setStatus("active")
      const served = yield* authenticate
      expect(served._tag === "Right" && served.right.cached).toBeUndefined() // read again, not from the cache
      const cached = yield* authenticate
      expect(cached._tag === "Right" && cached.right.cached?.key_hash).toMatch(/^[0-9a-f]{64}$/)
    }))
})
