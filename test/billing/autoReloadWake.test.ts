import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { type FakeProvider, seedTestCatalogue, startFakeProvider } from "../money/support.js"
import { bearer, seedAgent } from "../support/fixtures.js"
import { request } from "../support/server.js"
import { balanceOf, type BillingWorld, expectLedgerInvariant, startBillingWorld, waitUntil } from "./support/world.js"

/**
 * The auto-reload worker is woken in the process by a gateway settlement: with its
 * periodic look set to ten minutes, a call that takes the balance under the threshold
 * still starts the charge at once.
 */
let world: BillingWorld
let provider: FakeProvider

beforeAll(async () => {
  provider = await startFakeProvider()
  world = await startBillingWorld("billing_auto_reload_wake", {
    PROVIDERS_UPSTREAM: provider.url,
    BILLING_WORKER_INTERVAL_MS: "600000"
  })
  await seedTestCatalogue(world.db)
})

afterAll(async () => {
  await world?.close()
  await provider?.close()
})

describe("waking auto-reload", () => {
  it("starts the charge right after the settlement that crossed the threshold", async () => {
    const org = await world.newOrg()
    const started = await world.paidTopUp(org, { credits: 10_000, save_card: true })
    await world.api(`/v1/orgs/${org.orgId}/billing/payments/${started.payment.id}/confirm`, {
      token: org.owner.sessionToken,
      method: "POST"
    })
    const enabled = await world.api(`/v1/orgs/${org.orgId}/billing/auto-reload`, {
      method: "PUT",
      token: org.owner.sessionToken,
      body: { enabled: true, threshold_credits: 9_995, amount_credits: 5_000 }
    })
    expect(enabled.status).toBe(200)
    await new Promise((resolve) => setTimeout(resolve, 300))
    expect(await balanceOf(world.db, org.orgId)).toBe(10_000n)
    const agent = await seedAgent(world.db, org.orgId, { mode: "live" })
    const call = await request(`${world.server.url}/v1/call`, {
      method: "POST",
      headers: bearer(agent.key),
      body: { endpoint: "fakeprov/ok" }
    })
    expect(call.status).toBe(200)
    await waitUntil(async () => (await balanceOf(world.db, org.orgId)) === 10_000n - 10n + 5_000n, "the reload", 15_000)
    await expectLedgerInvariant(world.db)
  })
})
