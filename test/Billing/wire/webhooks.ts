import { EMULATOR_WEBHOOK_SECRET } from "@agent-gateway/stripe-emulator"
import { beforeAll, describe, expect, it } from "vitest"
import { seedAdmin } from "../../support/fixtures.js"
import { bearer, seedAgent } from "../../support/fixtures.js"
import { balanceOf, expectLedgerInvariant, invariants } from "../../support/ledgerChecks.js"
import { request } from "../../support/server.js"
import { call, type World } from "../../support/world.js"
import { errorBody, newOrg, paidTopUp, webhookUrl } from "../support.js"

/**
 * The payment webhook: signatures checked by the library against the raw body, events
 * deduplicated by id, refunds and chargebacks taking credits back (past zero if they were
 * spent), a chargeback freezing the org's credits until an administrator unfreezes them.
 */
export const webhooksCases = (started: () => World) => {
  let world: World
  beforeAll(() => {
    world = started()
  })

  const paidAndCredited = async (credits: number) => {
    const org = await newOrg(world)
    const started = await paidTopUp(world, org, { credits })
    const event = world.stripe.lastEvent("payment_intent.succeeded", started.payment.provider_payment_id)
    expect((await world.stripe.deliver(webhookUrl(world), event)).status).toBe(200)
    return { org, payment: started.payment }
  }

  describe("signatures", () => {
    it("answers 400 invalid_signature for a wrong secret, a changed body or no signature, and changes nothing", async () => {
      const org = await newOrg(world)
      const started = await paidTopUp(world, org, { credits: 10_000 })
      const event = world.stripe.lastEvent("payment_intent.succeeded", started.payment.provider_payment_id)
      const before = await balanceOf(world.db, org.orgId)

      const wrongSecret = await world.stripe.deliver(webhookUrl(world), event, "whsec_not_ours")
      expect(wrongSecret.status).toBe(400)
      expect(wrongSecret.body).toEqual(errorBody(world, "invalid_signature", false))

      // The signature was made for the original body; the same header with another body fails.
      const header = (await import("stripe")).default.webhooks.generateTestHeaderString({
        payload: event.payload,
        secret: EMULATOR_WEBHOOK_SECRET
      })
      const reformatted = await request(webhookUrl(world), {
        method: "POST",
        headers: { "stripe-signature": header, "content-type": "application/json" },
        rawBody: JSON.stringify(JSON.parse(event.payload), null, 2)
      })
      expect(reformatted.status).toBe(400)
      expect(reformatted.json).toEqual(errorBody(world, "invalid_signature", false))

      const unsigned = await request(webhookUrl(world), {
        method: "POST",
        rawBody: event.payload,
        headers: { "content-type": "application/json" }
      })
      expect(unsigned.status).toBe(400)
      expect(unsigned.json).toEqual(
        errorBody(world, "invalid_signature", false, "The Stripe-Signature header is missing")
      )

      expect(await balanceOf(world.db, org.orgId)).toBe(before)
      const [seen] = await world.db.query(`SELECT count(*)::int AS n FROM payment_webhook_events WHERE event_id = $1`, [
        event.id
      ])
      expect(seen.n).toBe(0)
      // The genuine delivery still works.
      expect((await world.stripe.deliver(webhookUrl(world), event)).status).toBe(200)
      expect(await balanceOf(world.db, org.orgId)).toBe(before + 10_000n)
    })

    it("acknowledges events it does not handle without recording them", async () => {
      const answer = await world.stripe.deliver(webhookUrl(world), {
        id: "evt_other",
        type: "customer.created",
        payload: JSON.stringify({
          id: "evt_other",
          object: "event",
          type: "customer.created",
          data: { object: { id: "cus_1", object: "customer" } }
        })
      })
      expect(answer).toEqual({ status: 200, body: { received: true, handled: false, duplicate: false } })
    })
  })

  describe("refunds and chargebacks", () => {
    it("takes back the refunded share of the credits, once per refund, even past zero", async () => {
      const { org, payment } = await paidAndCredited(20_000)
      const balance = await balanceOf(world.db, org.orgId)
      // Spend most of the balance so the refund drives it negative.
      await world.db.query(
        `INSERT INTO ledger_entries (id, org_id, kind, amount, credits, note, created_at)
       VALUES (gen_random_uuid(), $1, 'adjustment', $2, $3, 'test: spent', now())`,
        [org.orgId, (-(balance - 1_000n)).toString(), (balance - 1_000n).toString()]
      )
      await world.db.query(`UPDATE org_balances SET balance = 1000 WHERE org_id = $1`, [org.orgId])

      const half = world.stripe.refund(payment.provider_payment_id, 1_000) // $10 of $20
      expect((await world.stripe.deliver(webhookUrl(world), half)).status).toBe(200)
      expect((await world.stripe.deliver(webhookUrl(world), half)).body.duplicate).toBe(true)
      expect(await balanceOf(world.db, org.orgId)).toBe(1_000n - 10_000n)
      const all = world.stripe.refund(payment.provider_payment_id, 1_000)
      expect((await world.stripe.deliver(webhookUrl(world), all)).status).toBe(200)
      expect(await balanceOf(world.db, org.orgId)).toBe(1_000n - 20_000n)
      const entries = await world.db.query(
        `SELECT amount::text, note FROM ledger_entries WHERE org_id = $1 AND kind = 'adjustment' AND note LIKE 'Refund%' ORDER BY seq`,
        [org.orgId]
      )
      expect(entries.map((e) => e.amount)).toEqual(["-10000", "-10000"])
      expect(entries[0]!.note).toContain(payment.id)
      const shown = await call(world, "GET", `/v1/orgs/${org.orgId}/billing/payments/${payment.id}`, {
        token: org.owner.sessionToken
      })
      expect(shown.json.payment).toMatchObject({
        status: "refunded",
        refunded: "20.000",
        credits_taken_back: { credits: "20000", usd: "20.000" }
      })
      await expectLedgerInvariant(world.db)
    })

    it("freezes credits on a chargeback: purchases answer 403 credits_frozen, reads work, until an administrator unfreezes", async () => {
      const { org, payment } = await paidAndCredited(30_000)
      const agent = await seedAgent(world.db, org.orgId, { mode: "live" })
      const callGateway = () =>
        request(`${world.server.url}/v1/call`, {
          method: "POST",
          headers: bearer(agent.key),
          body: { endpoint: "fakeprov/ok" }
        })
      expect((await callGateway()).status).toBe(200)
      const before = await balanceOf(world.db, org.orgId)

      const dispute = world.stripe.dispute(payment.provider_payment_id, 3_000)
      expect((await world.stripe.deliver(webhookUrl(world), dispute)).status).toBe(200)
      expect(await balanceOf(world.db, org.orgId)).toBe(before - 30_000n)

      const refused = await callGateway()
      expect(refused.status).toBe(403)
      expect(refused.json).toEqual(errorBody(world, "credits_frozen", false))
      const balance = await request(`${world.server.url}/v1/balance`, { headers: bearer(agent.key) })
      expect(balance.status).toBe(200)
      expect(balance.json.credits_frozen).toBe(true)
      const summary = await call(world, "GET", `/v1/orgs/${org.orgId}/billing`, { token: org.owner.sessionToken })
      expect(summary.json).toMatchObject({ credits_frozen: true })
      const shown = await call(world, "GET", `/v1/orgs/${org.orgId}/billing/payments/${payment.id}`, {
        token: org.owner.sessionToken
      })
      expect(shown.json.payment).toMatchObject({ status: "disputed", disputed: "30.000" })
      // A refund of the same money afterwards takes nothing more.
      const refund = world.stripe.refund(payment.provider_payment_id, 3_000)
      expect((await world.stripe.deliver(webhookUrl(world), refund)).status).toBe(200)
      expect(await balanceOf(world.db, org.orgId)).toBe(before - 30_000n)

      const admin = await seedAdmin(world.db)
      const unfreeze = await request(`${world.server.url}/admin/orgs/${org.orgId}/credits/unfreeze`, {
        method: "POST",
        headers: bearer(admin.token)
      })
      expect(unfreeze.status).toBe(200)
      expect(unfreeze.json).toEqual({ org_id: org.orgId, credits_frozen: false })
      // Unfrozen; the balance is still short, so the purchase is refused for credits now.
      const [row] = await world.db.query(`SELECT frozen FROM org_balances WHERE org_id = $1`, [org.orgId])
      expect(row.frozen).toBe(false)
      expect((await callGateway()).json.error.code).not.toBe("credits_frozen")
      const ledger = await invariants(world.db, org.orgId)
      expect(ledger.entriesSum).toBe(ledger.balance)
      await expectLedgerInvariant(world.db)
    })
  })

  describe("failed payments", () => {
    it("shows the latest failure reason: a second payment_intent.payment_failed replaces the first", async () => {
      const org = await newOrg(world)
      const started = await paidTopUp(world, org, { credits: 10_000 }, "pm_card_chargeDeclined")
      const piId = started.payment.provider_payment_id
      const declined = world.stripe.lastEvent("payment_intent.payment_failed", piId)
      expect((await world.stripe.deliver(webhookUrl(world), declined)).status).toBe(200)
      const history = async () =>
        (await call(world, "GET", `/v1/orgs/${org.orgId}/billing/payments`, { token: org.owner.sessionToken })).json
          .payments
      expect(await history()).toEqual([
        expect.objectContaining({ status: "failed", failure_message: "Your card was declined." })
      ])
      await world.stripe.browserConfirm(piId, started.client_secret, "pm_card_chargeDeclinedInsufficientFunds")
        .catch(() => undefined)
      const insufficient = world.stripe.lastEvent("payment_intent.payment_failed", piId)
      expect(insufficient.id).not.toBe(declined.id)
      expect((await world.stripe.deliver(webhookUrl(world), insufficient)).status).toBe(200)
      expect(await history()).toEqual([
        expect.objectContaining({ status: "failed", failure_message: "Your card has insufficient funds." })
      ])
    })
  })
}
