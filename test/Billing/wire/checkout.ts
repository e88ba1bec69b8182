import { beforeAll, describe, expect, it } from "vitest"
import type { SeededOrg } from "../../support/fixtures.js"
import { balanceOf, expectLedgerInvariant } from "../../support/ledgerChecks.js"
import { call, type World } from "../../support/world.js"
import { errorBody, newOrg, topUpEntries, webhookUrl } from "../support.js"

/**
 * Buying credits on Stripe's hosted Checkout page (the dashboard's Buy credits): the
 * session as Stripe receives it, paying on the fake's hosted page, credits landing once
 * whichever of the return, `checkout.session.completed` and `payment_intent.succeeded`
 * comes first (and all of them at once), a declined card, and the cap allowance coming back
 * when a session expires or the owner cancels.
 */
export const checkoutCases = (started: () => World) => {
  let world: World
  beforeAll(() => {
    world = started()
  })

  const checkout = (org: SeededOrg, body: unknown) =>
    call(world, "POST", `/v1/orgs/${org.orgId}/billing/checkout`, { token: org.owner.sessionToken, body })

  const confirm = (org: SeededOrg, paymentId: string) =>
    call(world, "POST", `/v1/orgs/${org.orgId}/billing/payments/${paymentId}/confirm`, {
      token: org.owner.sessionToken
    })

  const sessionOf = (started: any) => {
    const id = new URL(started.checkout_url).pathname.split("/").pop()!
    return world.stripe.checkoutSessions.get(id)!
  }

  /** Starts a checkout and pays it on the hosted page; answers the start and the page's redirect. */
  const paidCheckout = async (org: SeededOrg, body: Record<string, unknown>, card = "4242 4242 4242 4242") => {
    const started = await checkout(org, body)
    expect(started.status, JSON.stringify(started.json)).toBe(201)
    const paid = await world.stripe.payCheckout(started.json.checkout_url, card)
    return { started: started.json, paid, session: sessionOf(started.json) }
  }

  describe("buying credits through Stripe Checkout", () => {
    it("creates a payment-mode session returning to the billing page, with no client secret", async () => {
      const org = await newOrg(world)
      const started = await checkout(org, { amount_usd: "25", save_card: true })
      expect(started.status).toBe(201)
      expect(started.json).toMatchObject({
        payment: { purpose: "top_up", status: "pending", amount: "25.000", save_card: true, provider_payment_id: null },
        client_secret: null,
        checkout_url: expect.stringMatching(new RegExp(`^${world.stripe.url}/c/pay/cs_test_`))
      })
      const session = sessionOf(started.json)
      const billing = `${world.server.baseUrl}/dashboard/orgs/${org.orgId}/billing?payment=${started.json.payment.id}`
      expect(session).toMatchObject({
        mode: "payment",
        status: "open",
        amount_total: 2500,
        currency: "usd",
        customer: expect.stringMatching(/^cus_/),
        metadata: { payment_id: started.json.payment.id },
        payment_intent: null,
        payment_intent_data: { metadata: { payment_id: started.json.payment.id }, setup_future_usage: "off_session" },
        success_url: `${billing}&session_id={CHECKOUT_SESSION_ID}`,
        cancel_url: `${billing}&checkout=canceled`
      })
      // Without saving the card: no future use asked for.
      const once = await checkout(org, { credits: 10_000 })
      expect(sessionOf(once.json).payment_intent_data.setup_future_usage).toBeNull()
    })

    it("pays on the hosted page, comes back, and credits once; the webhooks after it change nothing", async () => {
      const org = await newOrg(world)
      const before = await balanceOf(world.db, org.orgId)
      const { paid, session, started } = await paidCheckout(org, { amount_usd: "20", save_card: true })
      expect(paid.status).toBe(303)
      expect(paid.location).toBe(session.success_url.replace("{CHECKOUT_SESSION_ID}", session.id))

      const back = await confirm(org, started.payment.id)
      expect(back.status).toBe(200)
      expect(back.json.payment).toMatchObject({
        status: "succeeded",
        provider_payment_id: session.payment_intent,
        card: { brand: "visa", last4: "4242" }
      })
      expect(await balanceOf(world.db, org.orgId)).toBe(before + 20_000n)

      for (const type of ["checkout.session.completed", "payment_intent.succeeded"]) {
        const event = world.stripe.lastEvent(type, type.startsWith("checkout") ? session.id : session.payment_intent!)
        expect((await world.stripe.deliver(webhookUrl(world), event)).status).toBe(200)
      }
      expect(await confirm(org, started.payment.id)).toMatchObject({ status: 200 })
      expect(await topUpEntries(world.db, org.orgId)).toEqual([
        { amount: "20000", note: expect.stringContaining(started.payment.id) }
      ])
      // The card is kept for auto-reload.
      const summary = await call(world, "GET", `/v1/orgs/${org.orgId}/billing`, { token: org.owner.sessionToken })
      expect(summary.json).toMatchObject({ card: { brand: "visa", last4: "4242" } })
      await expectLedgerInvariant(world.db)
    })

    it("credits from checkout.session.completed before the owner is back, once", async () => {
      const org = await newOrg(world)
      const before = await balanceOf(world.db, org.orgId)
      const { session, started } = await paidCheckout(org, { credits: 15_000 })
      const completed = world.stripe.lastEvent("checkout.session.completed", session.id)
      const delivered = await world.stripe.deliver(webhookUrl(world), completed)
      expect(delivered).toMatchObject({ status: 200, body: { handled: true, duplicate: false } })
      expect(await balanceOf(world.db, org.orgId)).toBe(before + 15_000n)
      const succeeded = world.stripe.lastEvent("payment_intent.succeeded", session.payment_intent!)
      expect((await world.stripe.deliver(webhookUrl(world), succeeded)).status).toBe(200)
      expect((await confirm(org, started.payment.id)).json.payment.status).toBe("succeeded")
      expect(await balanceOf(world.db, org.orgId)).toBe(before + 15_000n)
      await expectLedgerInvariant(world.db)
    })

    it("credits from payment_intent.succeeded alone (the session's payment found by its metadata)", async () => {
      const org = await newOrg(world)
      const before = await balanceOf(world.db, org.orgId)
      const { session, started } = await paidCheckout(org, { credits: 12_000 })
      const succeeded = world.stripe.lastEvent("payment_intent.succeeded", session.payment_intent!)
      expect((await world.stripe.deliver(webhookUrl(world), succeeded)).status).toBe(200)
      expect(await balanceOf(world.db, org.orgId)).toBe(before + 12_000n)
      const listed = await call(world, "GET", `/v1/orgs/${org.orgId}/billing/payments/${started.payment.id}`, {
        token: org.owner.sessionToken
      })
      expect(listed.json.payment).toMatchObject({ status: "succeeded", provider_payment_id: session.payment_intent })
    })

    it("credits once when both events arrive many times at once together with the return", async () => {
      const org = await newOrg(world)
      const before = await balanceOf(world.db, org.orgId)
      const { session, started } = await paidCheckout(org, { credits: 30_000 })
      const completed = world.stripe.lastEvent("checkout.session.completed", session.id)
      const succeeded = world.stripe.lastEvent("payment_intent.succeeded", session.payment_intent!)
      const answers = await Promise.all([
        ...Array.from({ length: 8 }, () => world.stripe.deliver(webhookUrl(world), completed)),
        ...Array.from({ length: 8 }, () => world.stripe.deliver(webhookUrl(world), succeeded)),
        confirm(org, started.payment.id),
        confirm(org, started.payment.id),
        confirm(org, started.payment.id)
      ])
      for (const answer of answers) expect(answer.status).toBe(200)
      expect(await balanceOf(world.db, org.orgId)).toBe(before + 30_000n)
      expect(await topUpEntries(world.db, org.orgId)).toHaveLength(1)
      await expectLedgerInvariant(world.db)
    })

    it("shows a declined card as failed with Stripe's reason, and a second card on the same page pays", async () => {
      const org = await newOrg(world)
      const before = await balanceOf(world.db, org.orgId)
      const { paid, session, started } = await paidCheckout(org, { credits: 10_000 }, "4000 0000 0000 0002")
      expect(paid.status).toBe(200)
      expect(paid.location).toBeNull()
      expect(paid.text).toContain("Your card was declined.")
      const failedEvent = world.stripe.lastEvent("payment_intent.payment_failed", session.payment_intent!)
      expect((await world.stripe.deliver(webhookUrl(world), failedEvent)).status).toBe(200)
      const back = await confirm(org, started.payment.id)
      expect(back.json.payment).toMatchObject({ status: "failed", failure_message: "Your card was declined." })
      expect(await balanceOf(world.db, org.orgId)).toBe(before)

      const again = await world.stripe.payCheckout(started.checkout_url, "5555 5555 5555 4444")
      expect(again.status).toBe(303)
      const after = await confirm(org, started.payment.id)
      expect(after.json.payment).toMatchObject({ status: "succeeded", failure_message: null })
      expect(await balanceOf(world.db, org.orgId)).toBe(before + 10_000n)
    })

    it("charges INR at the ECB rate on the hosted page, one-time (no card kept)", async () => {
      world.ecb.set({ date: "2026-11-21", usd: "1.0500", inr: "88.6200" })
      await world.db.query(`DELETE FROM fx_rates`)
      const org = await newOrg(world)
      const before = await balanceOf(world.db, org.orgId)
      const kept = await checkout(org, { amount_usd: "25", currency: "inr", save_card: true })
      expect(kept.status).toBe(400)
      expect(kept.json).toEqual(errorBody(world, "invalid_input", false))
      const { paid, session, started } = await paidCheckout(org, { amount_usd: "25", currency: "inr" })
      expect(started.payment).toMatchObject({ currency: "inr", amount: "2110.00", fx: { inr_per_usd: "84.4000" } })
      expect(session).toMatchObject({ currency: "inr", amount_total: 211_000, customer: null })
      expect(session.payment_intent_data.setup_future_usage).toBeNull()
      expect(paid.status).toBe(303)
      expect((await confirm(org, started.payment.id)).json.payment.status).toBe("succeeded")
      expect(await balanceOf(world.db, org.orgId)).toBe(before + 25_000n)
    })

    it("answers the same session again under the same idempotency key", async () => {
      const org = await newOrg(world)
      const body = { amount_usd: "10", idempotency_key: "buy-1" }
      const [first, second] = await Promise.all([checkout(org, body), checkout(org, body)])
      const answers = [first, second].filter((a) => a.status === 201)
      expect(answers.length).toBeGreaterThanOrEqual(1)
      const third = await checkout(org, body)
      expect(third.status).toBe(201)
      expect(third.json.payment.id).toBe(answers[0]!.json.payment.id)
      expect(third.json.checkout_url).toBe(answers[0]!.json.checkout_url)
      const sessions = [...world.stripe.checkoutSessions.values()].filter((s) =>
        s.metadata.payment_id === third.json.payment.id
      )
      expect(sessions).toHaveLength(1)
      const other = await checkout(org, { amount_usd: "11", idempotency_key: "buy-1" })
      expect(other.status).toBe(409)
      expect(other.json).toEqual(errorBody(world, "idempotency_conflict", false))
    })
  })

  describe("the new-account cap with Checkout", () => {
    it("counts an open session, and gives its allowance back when Stripe expires it", async () => {
      const org = await newOrg(world, { createdDaysAgo: 1 })
      const open = await checkout(org, { amount_usd: "150" })
      expect(open.status).toBe(201)
      const over = await checkout(org, { amount_usd: "100" })
      expect(over.status).toBe(402)
      expect(over.json).toEqual(errorBody(world, "topup_cap", false))

      const expired = world.stripe.expireCheckout(sessionOf(open.json).id)
      expect((await world.stripe.deliver(webhookUrl(world), expired)).status).toBe(200)
      const payment = await call(world, "GET", `/v1/orgs/${org.orgId}/billing/payments/${open.json.payment.id}`, {
        token: org.owner.sessionToken
      })
      expect(payment.json.payment.status).toBe("canceled")
      expect((await checkout(org, { amount_usd: "100" })).status).toBe(201)
    })

    it("gives the allowance back when the owner comes back cancelled, after a declined try", async () => {
      const org = await newOrg(world, { createdDaysAgo: 1 })
      const { started } = await paidCheckout(org, { amount_usd: "200" }, "4000 0000 0000 0002")
      expect((await checkout(org, { amount_usd: "5" })).status).toBe(402)
      const canceled = await call(
        world,
        "POST",
        `/v1/orgs/${org.orgId}/billing/payments/${started.payment.id}/cancel`,
        {
          token: org.owner.sessionToken
        }
      )
      expect(canceled.status).toBe(200)
      expect(canceled.json.payment.status).toBe("canceled")
      const session = sessionOf(started)
      expect(session.status).toBe("expired")
      expect(world.stripe.paymentIntents.get(session.payment_intent!)!.status).toBe("canceled")
      // The hosted page no longer takes a card.
      expect((await world.stripe.payCheckout(started.checkout_url, "4242424242424242")).status).toBe(410)
      expect((await checkout(org, { amount_usd: "200" })).status).toBe(201)
    })

    it("credits a session paid just before the owner cancels instead of cancelling it", async () => {
      const org = await newOrg(world)
      const before = await balanceOf(world.db, org.orgId)
      const { started } = await paidCheckout(org, { credits: 10_000 })
      const canceled = await call(
        world,
        "POST",
        `/v1/orgs/${org.orgId}/billing/payments/${started.payment.id}/cancel`,
        {
          token: org.owner.sessionToken
        }
      )
      expect(canceled.json.payment.status).toBe("succeeded")
      expect(await balanceOf(world.db, org.orgId)).toBe(before + 10_000n)
    })
  })
}
