import { expect, layer } from "@effect/vitest"
import { Effect } from "effect"
import type { CallRequest } from "../../src/Domain/GatewayCall.js"
import { Events } from "../../src/Services/Events/Events.js"
import { Gateway } from "../../src/Services/Gateway/Gateway.js"
import { Ledger } from "../../src/Services/Ledger/Ledger.js"
import { eventuallyEffect } from "../support/eventually.js"
import { agentOf, seedAgent, seedOrg } from "../support/fixtures.js"
import { gatewayTier, SuiteDatabase } from "../support/testLayers.js"

/**
 * The low-balance alert (`balance.low`) warns that money the owner put in runs out: an org
 * on its trial's credits alone is not alerted (its balance starts at the default threshold);
 * from its first top-up it is. On the gateway's and ledger's services, without HTTP.
 */
const okCall: CallRequest = { endpoint: "fakeprov/ok" }

layer(gatewayTier("lowunfunded"))((it) => {
  it.effect("balance.low is not emitted on trial credits, and is once the org is funded", () =>
    Effect.gen(function*() {
      const db = yield* SuiteDatabase
      const gateway = yield* Gateway
      const ledger = yield* Ledger
      const events = yield* Events
      const org = yield* Effect.promise(() => seedOrg(db))
      const seeded = yield* Effect.promise(() => seedAgent(db, org.orgId, { mode: "live" }))
      const agent = yield* Effect.promise(() => agentOf(db, seeded.agentId))
      yield* ledger.grantTrial(org.orgId)
      const callOnce = Effect.gen(function*() {
        const answer = yield* gateway.call(agent, okCall)
        expect(answer.status).toBe("succeeded")
      })
      const lowAlerts = events.list(org.orgId, { limit: 100 }).pipe(
        Effect.map((page) => page.events.filter((e) => e.type === "balance.low"))
      )
      // 5,000 trial credits, at the default $5 alert: the first call takes the balance under it.
      yield* callOnce
      yield* callOnce
      expect(yield* lowAlerts).toEqual([])

      // Funded: 4,980 + 30 = 5,010; two 10-credit calls take it to 4,990, under the alert.
      yield* ledger.credit(org.orgId, 30n, "top_up", "test top-up")
      yield* callOnce
      expect(yield* lowAlerts).toEqual([])
      yield* callOnce
      const alerts = yield* eventuallyEffect(lowAlerts.pipe(Effect.map((found) => found.length > 0 && found)), {
        what: "the balance.low alert"
      })
      expect(alerts).toHaveLength(1)
    }))
})
