import { EMULATOR_PUBLISHABLE_KEY } from "@agent-gateway/stripe-emulator"
import { beforeAll, describe, expect, it } from "vitest"
import { addMember, seedOrgKey, seedUser } from "../../support/fixtures.js"
import { balanceOf, expectLedgerInvariant } from "../../support/ledgerChecks.js"
import { workersSettled } from "../../support/workerRounds.js"
import { call, eventually, type World } from "../../support/world.js"
import { errorBody, newOrg, paidTopUp, topUpEntries, webhookUrl } from "../support.js"

/**
 * Top-ups through the official Stripe library against a fake Stripe API: paying, credits
 * landing exactly once whichever confirmation comes first, amounts, idempotency keys,
 * provider trouble, receipts and the payment history.
 */
export const topUpsCases = (started: () => World) => {
  let world: World
  beforeAll(() => {
    world = started()
  })

  const topUp = (orgId: string, token: string, body: unknown) =>
    call(world, "POST", `/v1/orgs/${orgId}/billing/top-ups`, { token, body })

  describe("a USD top-up", () => {
    it("answers a client secret, and the confirmation credits the org once with a receipt to every owner", async () => {
      const org = await newOrg(world)
      const second = await seedUser(world.db, { phoneVerified: true })
      await addMember(world.db, org.orgId, second.userId, "owner")
      const started = await topUp(org.orgId, org.owner.sessionToken, { amount_usd: "25", save_card: true })
      expect(started.status).toBe(201)
      expect(started.json.payment).toMatchObject({
        purpose: "top_up",
        status: "pending",
        currency: "usd",
        amount: "25.000",
        amount_usd: "25.000",
        credits: { credits: "25000", usd: "25.000" },
        fx: null,
        save_card: true,
        provider: "stripe"
      })
      expect(started.json.client_secret).toMatch(/^pi_\w+_secret_\w+$/)
      expect(started.json.provider).toEqual({
        name: "stripe",
        sandbox: false,
        publishable_key: EMULATOR_PUBLISHABLE_KEY,
        notice: null
      })
      const pi = world.stripe.paymentIntents.get(started.json.payment.provider_payment_id)!
      expect(pi).toMatchObject({ amount: 2500, currency: "usd", setup_future_usage: "off_session" })
      expect(pi.metadata.payment_id).toBe(started.json.payment.id)

      // Not paid yet: confirming changes nothing.
      const early = await call(
        world,
        "POST",
        `/v1/orgs/${org.orgId}/billing/payments/${started.json.payment.id}/confirm`,
        {
          token: org.owner.sessionToken
        }
      )
      expect(early.json.payment.status).toBe("pending")
      const before = await balanceOf(world.db, org.orgId)

      await world.stripe.browserConfirm(pi.id, started.json.client_secret, "pm_card_visa")
      const confirmed = await call(
        world,
        "POST",
        `/v1/orgs/${org.orgId}/billing/payments/${started.json.payment.id}/confirm`,
        {
          token: org.owner.sessionToken
        }
      )
      expect(confirmed.status).toBe(200)
      expect(confirmed.json.payment).toMatchObject({
        status: "succeeded",
        card: { brand: "visa", last4: "4242" },
        receipt_url: expect.stringMatching(new RegExp(`^${world.stripe.url}/receipts/ch_`))
      })
      expect(await balanceOf(world.db, org.orgId)).toBe(before + 25_000n)
      const entries = await topUpEntries(world.db, org.orgId)
      expect(entries).toEqual([{ amount: "25000", note: expect.stringContaining(started.json.payment.id) }])

      // The org is funded: the trial's hourly limit no longer applies; the card is kept.
      const summary = await call(world, "GET", `/v1/orgs/${org.orgId}/billing`, { token: org.owner.sessionToken })
      expect(summary.json).toMatchObject({
        funded: true,
        card: { brand: "visa", last4: "4242", exp_month: 12, exp_year: 2034 },
        balance: { credits: (before + 25_000n).toString() }
      })

      for (const owner of [org.owner.email, second.email]) {
        const mail = await world.smtp.waitFor(owner, (m) => m.subject.includes("Receipt"))
        expect(mail.subject).toContain("USD 25.00")
        expect(mail.text).toContain(started.json.payment.id)
        expect(mail.text).toContain("25000 credits")
        expect(mail.text).toContain(`${world.stripe.url}/receipts/ch_`)
      }
      await expectLedgerInvariant(world.db)
    })

    it("credits once when the same webhook arrives 20 times at once together with the client's confirmation", async () => {
      const org = await newOrg(world)
      const before = await balanceOf(world.db, org.orgId)
      const started = await paidTopUp(world, org, { credits: "40000" })
      const event = world.stripe.lastEvent("payment_intent.succeeded", started.payment.provider_payment_id)
      const confirm = () =>
        call(world, "POST", `/v1/orgs/${org.orgId}/billing/payments/${started.payment.id}/confirm`, {
          token: org.owner.sessionToken
        })
      const answers = await Promise.all([
        ...Array.from({ length: 20 }, () => world.stripe.deliver(webhookUrl(world), event)),
        confirm(),
        confirm()
      ])
      const webhooks = answers.slice(0, 20) as Array<{ status: number; body: any }>
      for (const answer of webhooks) expect(answer.status).toBe(200)
      expect(webhooks.filter((a) => (a.body as any).duplicate === false)).toHaveLength(1)
      expect(await balanceOf(world.db, org.orgId)).toBe(before + 40_000n)
      expect(await topUpEntries(world.db, org.orgId)).toHaveLength(1)
      // Later redeliveries change nothing either.
      const again = await world.stripe.deliver(webhookUrl(world), event)
      expect(again).toEqual({ status: 200, body: { received: true, handled: true, duplicate: true } })
      expect(await topUpEntries(world.db, org.orgId)).toHaveLength(1)
      const receipts = () =>
        world.smtp.messages.filter((m) => m.to.includes(org.owner.email.toLowerCase()) && m.subject.includes("Receipt"))
      await eventually(async () => receipts().length > 0, { what: "the receipt" })
      await workersSettled(["mail worker"])
      expect(receipts()).toHaveLength(1)
      await expectLedgerInvariant(world.db)
    })

    it("lands from the webhook alone, with the payment's id in the entry", async () => {
      const org = await newOrg(world)
      const started = await paidTopUp(world, org, { amount_usd: 12.5 })
      const event = world.stripe.lastEvent("payment_intent.succeeded", started.payment.provider_payment_id)
      expect(await world.stripe.deliver(webhookUrl(world), event)).toEqual({
        status: 200,
        body: { received: true, handled: true, duplicate: false }
      })
      const entries = await topUpEntries(world.db, org.orgId)
      expect(entries).toEqual([{ amount: "12500", note: expect.stringContaining(started.payment.id) }])
      const history = await call(world, "GET", `/v1/orgs/${org.orgId}/billing/payments`, {
        token: org.owner.sessionToken
      })
      expect(history.json.payments).toHaveLength(1)
      expect(history.json.payments[0]).toMatchObject({ id: started.payment.id, status: "succeeded", amount: "12.500" })
      await expectLedgerInvariant(world.db)
    })

    it("records a declined card as failed and lets the customer pay with another card", async () => {
      const org = await newOrg(world)
      const started = await paidTopUp(world, org, { credits: 10_000 }, "pm_card_chargeDeclined")
      const failedEvent = world.stripe.lastEvent("payment_intent.payment_failed", started.payment.provider_payment_id)
      expect((await world.stripe.deliver(webhookUrl(world), failedEvent)).status).toBe(200)
      const failed = await call(world, "GET", `/v1/orgs/${org.orgId}/billing/payments/${started.payment.id}`, {
        token: org.owner.sessionToken
      })
      expect(failed.json.payment).toMatchObject({ status: "failed", failure_message: "Your card was declined." })
      expect(await topUpEntries(world.db, org.orgId)).toHaveLength(0)
      await world.stripe.browserConfirm(started.payment.provider_payment_id, started.client_secret, "pm_card_visa")
      const ok = await call(world, "POST", `/v1/orgs/${org.orgId}/billing/payments/${started.payment.id}/confirm`, {
        token: org.owner.sessionToken
      })
      expect(ok.json.payment.status).toBe("succeeded")
      expect(await topUpEntries(world.db, org.orgId)).toHaveLength(1)
      await expectLedgerInvariant(world.db)
    })
  })

  describe("amounts", () => {
    const cases: Array<[string, unknown]> = [
      ["zero credits", { credits: 0 }],
      ["negative credits", { credits: -5000 }],
      ["negative credits as a string", { credits: "-5000" }],
      ["fractional credits", { credits: 5000.5 }],
      ["fractional credits as a string", { credits: "5000.5" }],
      ["credits that are not a number", { credits: "lots" }],
      ["credits of the wrong type", { credits: true }],
      ["a fraction of a cent", { credits: 10_005 }],
      ["zero dollars", { amount_usd: "0" }],
      ["negative dollars", { amount_usd: -10 }],
      ["dollars that are not a number", { amount_usd: "ten" }],
      ["a fraction of a cent in dollars", { amount_usd: "10.001" }],
      ["under the minimum", { credits: 4_990 }],
      ["over the maximum", { credits: 5_000_010 }]
    ]
    it.each(cases)("answers 400 invalid_amount for %s and starts nothing", async (_name, body) => {
      const org = await newOrg(world)
      const before = world.stripe.count("POST /v1/payment_intents")
      const answer = await topUp(org.orgId, org.owner.sessionToken, body)
      expect(answer.status).toBe(400)
      expect(answer.json).toEqual(errorBody(world, "invalid_amount", false))
      expect(world.stripe.count("POST /v1/payment_intents")).toBe(before)
      const [count] = await world.db.query(`SELECT count(*)::int AS n FROM payments WHERE org_id = $1`, [org.orgId])
      expect(count.n).toBe(0)
    })

    it("publishes the minimum and maximum in /v1/pricing", async () => {
      const pricing = await call(world, "GET", "/v1/pricing")
      expect(pricing.json.top_up).toEqual({
        min: { credits: "5000", usd: "5.000" },
        max: { credits: "5000000", usd: "5000.000" },
        currencies: ["usd", "inr"],
        new_account_cap: { credits: "200000", usd: "200.000" },
        new_account_cap_days: 14
      })
    })

    it("answers 400 invalid_input for both or neither amount", async () => {
      const org = await newOrg(world)
      for (const body of [{}, { credits: 5000, amount_usd: "5" }]) {
        const answer = await topUp(org.orgId, org.owner.sessionToken, body)
        expect(answer.status).toBe(400)
        expect(answer.json.error.code).toBe("invalid_input")
      }
    })
  })

  describe("who may top up", () => {
    it("lets an owner's write org key start one, and refuses members and read keys", async () => {
      const org = await newOrg(world)
      const writeKey = await seedOrgKey(world.db, org.orgId, org.owner, "write")
      const byKey = await topUp(org.orgId, writeKey.secret, { credits: 5000 })
      expect(byKey.status).toBe(201)
      const member = await seedUser(world.db, { phoneVerified: true })
      await addMember(world.db, org.orgId, member.userId, "member")
      const byMember = await topUp(org.orgId, member.sessionToken, { credits: 5000 })
      expect(byMember.status).toBe(403)
      expect(byMember.json).toEqual(errorBody(world, "forbidden", false, "Only an org owner can do this"))
      const readKey = await seedOrgKey(world.db, org.orgId, org.owner, "read")
      expect((await topUp(org.orgId, readKey.secret, { credits: 5000 })).status).toBe(403)
      // Members read the summary and the history.
      expect((await call(world, "GET", `/v1/orgs/${org.orgId}/billing`, { token: member.sessionToken })).status).toBe(
        200
      )
      expect(
        (await call(world, "GET", `/v1/orgs/${org.orgId}/billing/payments`, { token: readKey.secret })).json.payments
      )
        .toHaveLength(1)
    })
  })

  describe("idempotency keys", () => {
    it("answers the same payment to the same request and 409 idempotency_conflict to another", async () => {
      const org = await newOrg(world)
      const before = world.stripe.count("POST /v1/payment_intents")
      const body = { credits: 20_000, idempotency_key: "order-1" }
      const first = await topUp(org.orgId, org.owner.sessionToken, body)
      const again = await topUp(org.orgId, org.owner.sessionToken, body)
      expect(first.status).toBe(201)
      expect(again.status).toBe(201)
      expect(again.json.payment.id).toBe(first.json.payment.id)
      expect(again.json.client_secret).toBe(first.json.client_secret)
      expect(world.stripe.count("POST /v1/payment_intents")).toBe(before + 1)
      const other = await topUp(org.orgId, org.owner.sessionToken, { credits: 30_000, idempotency_key: "order-1" })
      expect(other.status).toBe(409)
      expect(other.json).toEqual(errorBody(world, "idempotency_conflict", false))
      // Concurrent twins under a new key make one payment.
      const twins = await Promise.all(
        Array.from(
          { length: 6 },
          () => topUp(org.orgId, org.owner.sessionToken, { credits: 6_000, idempotency_key: "order-2" })
        )
      )
      const ids = new Set(twins.filter((t) => t.status === 201).map((t) => t.json.payment.id))
      expect(ids.size).toBe(1)
      for (const twin of twins) expect([201, 409]).toContain(twin.status)
      for (const twin of twins.filter((t) => t.status === 409)) expect(twin.json.error.code).toBe("request_in_progress")
      const [count] = await world.db.query(`SELECT count(*)::int AS n FROM payments WHERE org_id = $1`, [org.orgId])
      expect(count.n).toBe(2)
    })
  })

  describe("a request still running", () => {
    it("answers 409 request_in_progress to a twin under the same key while the first talks to the provider", async () => {
      const org = await newOrg(world)
      const held = world.stripe.hold("POST /v1/payment_intents")
      const first = topUp(org.orgId, org.owner.sessionToken, { credits: 9_000, idempotency_key: "slow-one" })
      await held.reached
      const twin = await topUp(org.orgId, org.owner.sessionToken, { credits: 9_000, idempotency_key: "slow-one" })
      expect(twin.status).toBe(409)
      expect(twin.json).toEqual(
        errorBody(
          world,
          "request_in_progress",
          true,
          "A request with this idempotency_key is still running; retry shortly for its answer"
        )
      )
      held.release()
      expect((await first).status).toBe(201)
    })

    it("re-arms balance.low with each top-up", async () => {
      const org = await newOrg(world)
      const started = await paidTopUp(world, org, { credits: 10_000 })
      await world.db.query(`UPDATE org_balances SET low_alert_armed = false WHERE org_id = $1`, [org.orgId])
      await call(world, "POST", `/v1/orgs/${org.orgId}/billing/payments/${started.payment.id}/confirm`, {
        token: org.owner.sessionToken
      })
      const [row] = await world.db.query(`SELECT low_alert_armed, funded FROM org_balances WHERE org_id = $1`, [
        org.orgId
      ])
      expect(row).toEqual({ low_alert_armed: true, funded: true })
    })
  })

  describe("provider trouble", () => {
    it.each(
      [["an error answer", "500"], ["an answer that is not a payment", "garbage"], [
        "no answer in time",
        "hang"
      ]] as const
    )(
      "answers 502 payment_unavailable for %s and changes nothing",
      async (_name, mode) => {
        const org = await newOrg(world)
        world.stripe.trouble(mode, 1, "POST /v1/payment_intents")
        const answer = await topUp(org.orgId, org.owner.sessionToken, {
          credits: 5000,
          idempotency_key: `trouble-${mode}`
        })
        expect(answer.status).toBe(502)
        expect(answer.json).toEqual(errorBody(world, "payment_unavailable", true))
        const [count] = await world.db.query(`SELECT count(*)::int AS n FROM payments WHERE org_id = $1`, [org.orgId])
        expect(count.n).toBe(0)
        // The retry under the same key works.
        const retry = await topUp(org.orgId, org.owner.sessionToken, {
          credits: 5000,
          idempotency_key: `trouble-${mode}`
        })
        expect(retry.status).toBe(201)
      }
    )

    it("never makes a second payment when the provider's answer was lost: our key goes to the provider", async () => {
      const org = await newOrg(world)
      const held = world.stripe.hold("POST /v1/payment_intents")
      const lost = topUp(org.orgId, org.owner.sessionToken, { credits: 7_000, idempotency_key: "lost-answer" })
      await held.reached
      const answer = await lost // the service gave up waiting: 502, nothing kept
      expect(answer.status).toBe(502)
      held.release() // the provider did make the payment
      await eventually(async () => [...world.stripe.paymentIntents.values()].some((p) => p.amount === 700), {
        what: "the held payment"
      })
      const made = [...world.stripe.paymentIntents.values()].filter((p) => p.amount === 700)
      const retry = await topUp(org.orgId, org.owner.sessionToken, { credits: 7_000, idempotency_key: "lost-answer" })
      expect(retry.status).toBe(201)
      expect(retry.json.payment.provider_payment_id).toBe(made[0]!.id)
      expect([...world.stripe.paymentIntents.values()].filter((p) => p.amount === 700)).toHaveLength(1)
      const keys = world.stripe.requests.filter((r) =>
        r.line === "POST /v1/payment_intents" && r.idempotencyKey?.startsWith(`payment:${org.orgId}`)
      )
      expect(new Set(keys.map((k) => k.idempotencyKey)).size).toBe(1)
    })
  })

  describe("refusals of the cap and the rate, on the wire", () => {
    // The rules (what is left, concurrent top-ups, stale rates) are capAndFx.test.ts's, on the services.
    it("answers 402 topup_cap and 503 fx_unavailable with the catalogue's bodies", async () => {
      const org = await newOrg(world)
      await paidTopUp(world, org, { amount_usd: "150" })
      const over = await topUp(org.orgId, org.owner.sessionToken, { amount_usd: "50.01" })
      expect(over.status).toBe(402)
      expect(over.json).toEqual(
        errorBody(world, "topup_cap", false, expect.stringContaining("50000 credits ($50.000) are left until"))
      )
      world.ecb.down()
      await world.db.query(`DELETE FROM fx_rates`)
      const inr = await topUp(org.orgId, org.owner.sessionToken, { amount_usd: "25", currency: "inr" })
      expect(inr.status).toBe(503)
      expect(inr.json).toEqual(
        errorBody(
          world,
          "fx_unavailable",
          true,
          "No USD to INR rate is available; INR top-ups are paused (USD top-ups work)"
        )
      )
      world.ecb.set({ date: "2026-11-20", usd: "1.0500", inr: "88.6200" })
    })
  })
}
