import { beforeAll, describe, expect, it } from "vitest"
import { bearer, seedAgent } from "../../support/fixtures.js"
import { balanceOf, expectLedgerInvariant } from "../../support/ledgerChecks.js"
import { request } from "../../support/server.js"
import { roundsFrom } from "../../support/workerRounds.js"
import { call, eventually, type World } from "../../support/world.js"
import { newOrg, paidTopUp } from "../support.js"

/**
 * The auto-reload worker is woken in the process by a gateway settlement: with its
 * periodic look set to ten minutes, a call that takes the balance under the threshold
 * still starts the charge at once.
 */
export const autoReloadWakeCases = (started: () => World) => {
  let world: World
  beforeAll(async () => {
    world = started()
    // The periodic look ten minutes away: only a wake can start the charge in time.
    await world.restart({ BILLING_WORKER_INTERVAL_MS: "600000" })
  })

  describe("waking auto-reload", () => {
    it("starts the charge right after the settlement that crossed the threshold", async () => {
      const org = await newOrg(world)
      const started = await paidTopUp(world, org, { credits: 10_000, save_card: true })
      await call(world, "POST", `/v1/orgs/${org.orgId}/billing/payments/${started.payment.id}/confirm`, {
        token: org.owner.sessionToken
      })
      const rounds = roundsFrom(["auto-reload"])
      const enabled = await call(world, "PUT", `/v1/orgs/${org.orgId}/billing/auto-reload`, {
        token: org.owner.sessionToken,
        body: { enabled: true, threshold_credits: 9_995, amount_credits: 5_000 }
      })
      expect(enabled.status).toBe(200)
      // Switching it on wakes the worker for one round (its periodic look is ten minutes away).
      await rounds.ended(1)
      expect(await balanceOf(world.db, org.orgId)).toBe(10_000n)
      const agent = await seedAgent(world.db, org.orgId, { mode: "live" })
      const gatewayCall = await request(`${world.server.url}/v1/call`, {
        method: "POST",
        headers: bearer(agent.key),
        body: { endpoint: "fakeprov/ok" }
      })
      expect(gatewayCall.status).toBe(200)
      await eventually(async () => (await balanceOf(world.db, org.orgId)) === 10_000n - 10n + 5_000n, {
        what: "the reload",
        timeoutMs: 15_000
      })
      await expectLedgerInvariant(world.db)
    })
  })
}
