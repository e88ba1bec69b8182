import type { StoredEvent } from "@agent-gateway/stripe-emulator"
import { beforeAll, describe, expect, it } from "vitest"
import { addMember, seedAgent, type SeededOrg, seedUser } from "../../support/fixtures.js"
import { expectLedgerInvariant } from "../../support/ledgerChecks.js"
import { call, type World } from "../../support/world.js"
import { errorBody, newOrg, webhookUrl } from "../support.js"

/**
 * Plans as Stripe subscriptions, against the fake Stripe over its socket: subscribing on
 * the hosted Checkout page (`mode: subscription`, the plan's price by lookup key), limits
 * following at once, renewals when Stripe's clock moves a month, a failed renewal kept
 * through Stripe's retries and then back to Pay as you go with a mail, upgrades prorated
 * by Stripe, the customer portal, and the founding offer's seats. Events are delivered
 * shuffled and several times over: the plan only ever follows what Stripe says now.
 */
export const plansCases = (started: () => World) => {
  let world: World
  beforeAll(() => {
    world = started()
  })

  const DAY = 86_400

  const choose = (org: SeededOrg, body: unknown) =>
    call(world, "POST", `/v1/orgs/${org.orgId}/billing/plan`, { token: org.owner.sessionToken, body })

  const planOf = async (orgId: string) =>
    (await world.db.query(`SELECT plan FROM orgs WHERE id = $1`, [orgId]))[0]!.plan

  const profileOf = async (orgId: string) =>
    (await world.db.query(`SELECT * FROM billing_profiles WHERE org_id = $1`, [orgId]))[0]!

  const planPayments = (orgId: string) =>
    world.db.query(
      `SELECT status, amount_minor::text AS amount, offer FROM payments WHERE org_id = $1 AND purpose = 'plan'
     ORDER BY created_at, amount_minor`,
      [orgId]
    )

  /** Events emitted since `from`, each delivered `times` times, shuffled, several at once. */
  const deliverShuffled = async (events: ReadonlyArray<StoredEvent>, times = 2) => {
    const all = events.flatMap((event) => Array.from({ length: times }, () => event))
    for (let i = all.length - 1; i > 0; i--) {
      const j = Math.floor(Math.random() * (i + 1))
      ;[all[i], all[j]] = [all[j]!, all[i]!]
    }
    const answers = await Promise.all(all.map((event) => world.stripe.deliver(webhookUrl(world), event)))
    for (const answer of answers) expect(answer.status, JSON.stringify(answer.body)).toBe(200)
  }

  /** Subscribes on the hosted page with a card; answers the start answer and the events Stripe emitted. */
  const subscribe = async (org: SeededOrg, body: Record<string, unknown>, card = "4242 4242 4242 4242") => {
    const started = await choose(org, body)
    expect(started.status, JSON.stringify(started.json)).toBe(200)
    const from = world.stripe.events.length
    const paid = await world.stripe.payCheckout(started.json.checkout_url, card)
    expect(paid.status, paid.text).toBe(303)
    return { started: started.json, events: world.stripe.events.slice(from) }
  }

  /** The owner comes back to the billing page, which confirms the payment. */
  const comeBack = (org: SeededOrg, paymentId: string) =>
    call(world, "POST", `/v1/orgs/${org.orgId}/billing/payments/${paymentId}/confirm`, {
      token: org.owner.sessionToken
    })

  const subscriptionOf = async (orgId: string) =>
    world.stripe.subscriptions.get((await profileOf(orgId)).subscription_id)!

  const newAgent = (org: SeededOrg) =>
    call(world, "POST", `/v1/orgs/${org.orgId}/agents`, {
      token: org.owner.sessionToken,
      body: { name: `agent ${Math.random()}` }
    })

  describe("subscribing", () => {
    it("goes through Checkout in subscription mode; the plan and its limits follow once the first month is paid", async () => {
      const org = await newOrg(world)
      for (let i = 0; i < 5; i++) await seedAgent(world.db, org.orgId)
      expect((await newAgent(org)).status).toBe(402)

      const started = await choose(org, { plan: "pro" })
      expect(started.status).toBe(200)
      expect(started.json).toMatchObject({
        plan: "payg",
        payment: { purpose: "plan", plan: "pro", amount: "99.000", currency: "usd", status: "pending" },
        client_secret: null,
        checkout_url: expect.stringContaining(`${world.stripe.url}/c/pay/cs_test_`)
      })
      expect(started.json.next_step).not.toMatch(/POST|client_secret|Stripe\.js/)
      const session = [...world.stripe.checkoutSessions.values()].find((s) => started.json.checkout_url === s.url)!
      expect(session).toMatchObject({
        mode: "subscription",
        amount_total: 9900,
        customer: expect.stringMatching(/^cus_/)
      })
      const price = [...world.stripe.prices.values()].find((p) => p.lookup_key === "plan_pro_monthly")!
      expect(price).toMatchObject({ unit_amount: 9900, recurring: { interval: "month" } })
      expect(await planOf(org.orgId)).toBe("payg")

      const paid = await world.stripe.payCheckout(started.json.checkout_url, "4242 4242 4242 4242")
      expect(paid.location).toContain(`/orgs/${org.orgId}/billing?payment=${started.json.payment.id}`)
      const back = await comeBack(org, started.json.payment.id)
      expect(back.json.payment).toMatchObject({ status: "succeeded", amount: "99.000", plan: "pro" })
      expect(await planOf(org.orgId)).toBe("pro")
      expect((await newAgent(org)).status).toBe(201)

      const sub = await subscriptionOf(org.orgId)
      expect(sub).toMatchObject({
        status: "active",
        metadata: { org_id: org.orgId, payment_id: started.json.payment.id }
      })
      const summary = await call(world, "GET", `/v1/orgs/${org.orgId}/billing`, { token: org.owner.sessionToken })
      expect(summary.json.plan).toMatchObject({
        id: "pro",
        monthly_fee_usd: "99.00",
        founding_offer: null,
        founding_offer_claim: null
      })
      expect(Date.parse(summary.json.plan.renews_at)).toBe(sub.items.data[0]!.current_period_end * 1000)
      expect(summary.json.card).toMatchObject({ last4: "4242" })
      await world.smtp.waitFor(org.owner.email, (m) => m.subject.includes("Receipt") && m.text.includes("Plan: pro"))

      const again = await choose(org, { plan: "pro" })
      expect(again.status).toBe(409)
      expect(again.json.error.code).toBe("conflict")

      const down = await choose(org, { plan: "payg" })
      expect(down.json).toMatchObject({ plan: "payg", payment: null, checkout_url: null })
      expect(sub.status).toBe("canceled")
      expect(await planOf(org.orgId)).toBe("payg")
      // Stripe's own news of the cancellation, late and twice, changes nothing.
      await deliverShuffled(world.stripe.events.filter((e) => e.payload.includes(sub.id)))
      expect(await planOf(org.orgId)).toBe("payg")
      const refused = await newAgent(org)
      expect(refused.status).toBe(402)
      expect(refused.json.error.code).toBe("plan_limit")
      expect(await planPayments(org.orgId)).toEqual([{ status: "succeeded", amount: "9900", offer: null }])
      await expectLedgerInvariant(world.db)
    })

    it("follows Stripe's events alone, in any order and many times over, when the owner never comes back", async () => {
      const org = await newOrg(world)
      const { events, started } = await subscribe(org, { plan: "max" })
      expect(events.map((e) => e.type).sort()).toEqual(
        ["checkout.session.completed", "customer.subscription.created", "invoice.paid"]
      )
      await deliverShuffled(events, 4)
      expect(await planOf(org.orgId)).toBe("max")
      expect(await planPayments(org.orgId)).toEqual([{ status: "succeeded", amount: "49900", offer: null }])
      const [row] = await world.db.query(`SELECT provider_payment_id FROM payments WHERE id = $1`, [started.payment.id])
      expect(row.provider_payment_id).toMatch(/^in_/)
    })
  })

  describe("renewals", () => {
    it("renews when Stripe's clock moves a month: invoice.paid moves the period and records the payment", async () => {
      const org = await newOrg(world)
      const { events } = await subscribe(org, { plan: "max" })
      await deliverShuffled(events)
      const before = (await profileOf(org.orgId)).plan_period_end as Date
      const sub = await subscriptionOf(org.orgId)
      const renewal = world.stripe.advanceClock(31 * DAY).filter((e) => e.payload.includes(sub.id))
      expect(renewal.map((e) => e.type).sort()).toEqual(["customer.subscription.updated", "invoice.paid"])
      // Reversed and doubled: the subscription's update may come before its invoice.
      await deliverShuffled([...renewal].reverse(), 3)
      const after = (await profileOf(org.orgId)).plan_period_end as Date
      expect(after.getTime()).toBeGreaterThan(before.getTime() + 27 * DAY * 1000)
      expect(await planOf(org.orgId)).toBe("max")
      expect(await planPayments(org.orgId)).toEqual([
        { status: "succeeded", amount: "49900", offer: null },
        { status: "succeeded", amount: "49900", offer: null }
      ])
      await world.smtp.waitFor(org.owner.email, (m) => m.subject.includes("Receipt") && m.text.includes("Plan: max"))
    })

    it("keeps the plan while Stripe retries a failed renewal, then returns to Pay as you go with a mail", async () => {
      const org = await newOrg(world)
      const { events } = await subscribe(org, { plan: "pro" })
      await deliverShuffled(events)
      const sub = await subscriptionOf(org.orgId)
      world.stripe.setBehaviour(sub.default_payment_method!, "declined")
      // Stripe's clock is the fake's, shared by every org here: only this subscription's events count.
      const failed = world.stripe.advanceClock(31 * DAY).filter((e) => e.payload.includes(sub.id))
      expect(failed.map((e) => e.type).sort()).toEqual(["customer.subscription.updated", "invoice.payment_failed"])
      await deliverShuffled(failed)
      expect(sub.status).toBe("past_due")
      expect(await planOf(org.orgId)).toBe("pro")
      expect(await planPayments(org.orgId)).toEqual([
        { status: "succeeded", amount: "9900", offer: null },
        { status: "failed", amount: "9900", offer: null }
      ])
      const warning = await world.smtp.waitFor(org.owner.email, (m) => m.subject.includes("could not be charged"))
      expect(warning.text).toContain("tried again")

      // Stripe's retries (one per move of its clock here) fail too; after the last it cancels.
      const retries: Array<StoredEvent> = []
      for (let i = 0; i < 3; i++) retries.push(...world.stripe.advanceClock(3 * DAY))
      expect(retries.map((e) => e.type)).toContain("customer.subscription.deleted")
      await deliverShuffled(retries)
      expect(await planOf(org.orgId)).toBe("payg")
      expect((await profileOf(org.orgId)).subscription_id).toBeNull()
      const ended = await world.smtp.waitFor(org.owner.email, (m) => m.subject.includes("plan ended"))
      expect(ended.text).toContain("retries failed")
      expect(ended.text).toContain("on the org's Billing page in the dashboard")
    })
  })

  describe("changing plan", () => {
    it("moves Pro to Max at once, Stripe invoicing the prorated difference", async () => {
      const org = await newOrg(world)
      const { events } = await subscribe(org, { plan: "pro" })
      await deliverShuffled(events)
      const from = world.stripe.events.length
      const up = await choose(org, { plan: "max" })
      expect(up.json).toMatchObject({ plan: "max", payment: null, checkout_url: null })
      expect(up.json.next_step).toContain("Max")
      expect(await planOf(org.orgId)).toBe("max")
      const sub = await subscriptionOf(org.orgId)
      expect(sub.items.data[0]!.price.lookup_key).toBe("plan_max_monthly")
      const invoice = world.stripe.invoices.get(sub.latest_invoice!)!
      expect(invoice.billing_reason).toBe("subscription_update")
      // Almost the whole month is left: almost the whole difference of $400.
      expect(invoice.amount_due).toBeGreaterThan(39_900)
      expect(invoice.amount_due).toBeLessThanOrEqual(40_000)
      await deliverShuffled(world.stripe.events.slice(from))
      expect(await planPayments(org.orgId)).toEqual([
        { status: "succeeded", amount: "9900", offer: null },
        { status: "succeeded", amount: String(invoice.amount_due), offer: null }
      ])
      const down = await choose(org, { plan: "pro" })
      expect(down.json.plan).toBe("pro")
      expect(await planOf(org.orgId)).toBe("pro")
    })
  })

  describe("the customer portal", () => {
    it("is opened for owners only; cancelling there returns the org to Pay as you go, a new card becomes the org's, a removed one is forgotten", async () => {
      const org = await newOrg(world)
      const { events } = await subscribe(org, { plan: "pro" })
      await deliverShuffled(events)
      const member = await seedUser(world.db, { phoneVerified: true })
      await addMember(world.db, org.orgId, member.userId, "member")
      const refused = await call(world, "POST", `/v1/orgs/${org.orgId}/billing/portal`, { token: member.sessionToken })
      expect(refused.status).toBe(403)
      const opened = await call(world, "POST", `/v1/orgs/${org.orgId}/billing/portal`, {
        token: org.owner.sessionToken
      })
      expect(opened.status).toBe(201)
      expect(opened.json.portal_url).toMatch(new RegExp(`^${world.stripe.url}/p/session/bps_`))

      const from = world.stripe.events.length
      const replaced = await world.stripe.usePortal(opened.json.portal_url, {
        action: "card",
        card_number: "5555555555554444"
      })
      expect(replaced.text).toContain("The card ending 4444 is now the card on file.")
      await deliverShuffled(world.stripe.events.slice(from))
      const summary = await call(world, "GET", `/v1/orgs/${org.orgId}/billing`, { token: org.owner.sessionToken })
      expect(summary.json.card).toMatchObject({ brand: "mastercard", last4: "4444" })

      // A card removed in the portal is the org's card no more (auto-reload cannot charge it);
      // a second delivery of the event changes nothing.
      const removeFrom = world.stripe.events.length
      const removed = await world.stripe.usePortal(opened.json.portal_url, { action: "remove_card" })
      expect(removed.text).toContain("The card ending 4444 was removed.")
      const detached = world.stripe.events.slice(removeFrom)
      expect(detached.map((e) => e.type)).toEqual(["payment_method.detached"])
      await deliverShuffled(detached)
      const withoutCard = await call(world, "GET", `/v1/orgs/${org.orgId}/billing`, { token: org.owner.sessionToken })
      expect(withoutCard.json.card).toBeNull()

      const cancelFrom = world.stripe.events.length
      const cancelled = await world.stripe.usePortal(opened.json.portal_url, { action: "cancel" })
      expect(cancelled.text).toContain("The subscription is cancelled.")
      await deliverShuffled(world.stripe.events.slice(cancelFrom), 3)
      expect(await planOf(org.orgId)).toBe("payg")
      const mail = await world.smtp.waitFor(org.owner.email, (m) => m.subject.includes("plan ended"))
      expect(mail.text).toContain("cancelled in the billing portal")
    })
  })

  describe("the founding offer", () => {
    it("subscribes at the founding price once per org; the seat is reserved at checkout and taken when paid", async () => {
      const before = (await call(world, "GET", "/v1/pricing")).json.founding_offer
      const org = await newOrg(world)
      const started = await choose(org, { plan: "pro", offer: "founding-pro" })
      expect(started.json.payment).toMatchObject({ amount: "49.000", offer: "founding-pro" })
      expect((await call(world, "GET", "/v1/pricing")).json.founding_offer.taken).toBe(before.taken + 1)
      const second = await choose(org, { plan: "pro", offer: "founding-pro" })
      expect(second.status).toBe(409)
      expect(second.json).toEqual(
        errorBody(world, "offer_unavailable", false, expect.stringContaining("already under way"))
      )
      const claimOf = async () =>
        (await call(world, "GET", `/v1/orgs/${org.orgId}/billing`, { token: org.owner.sessionToken })).json.plan
          .founding_offer_claim
      expect(await claimOf()).toBe("under_way")

      const from = world.stripe.events.length
      await world.stripe.payCheckout(started.json.checkout_url, "4242 4242 4242 4242")
      await deliverShuffled(world.stripe.events.slice(from))
      expect(await planOf(org.orgId)).toBe("pro")
      const sub = await subscriptionOf(org.orgId)
      expect(sub.items.data[0]!.price).toMatchObject({ lookup_key: "plan_pro_founding_monthly", unit_amount: 4900 })
      const summary = await call(world, "GET", `/v1/orgs/${org.orgId}/billing`, { token: org.owner.sessionToken })
      expect(summary.json.plan).toMatchObject({
        id: "pro",
        monthly_fee_usd: "49.00",
        founding_offer: "founding-pro",
        founding_offer_claim: "used"
      })
      const [claim] = await world.db.query(`SELECT status FROM founding_offer_claims WHERE org_id = $1`, [org.orgId])
      expect(claim.status).toBe("taken")
      const used = await choose(org, { plan: "pro", offer: "founding-pro" })
      expect(used.json).toEqual(
        errorBody(world, "offer_unavailable", false, "This org has already used the founding offer (once per org)")
      )
      // Max and back keeps the founding price: the seat is the org's for life.
      await choose(org, { plan: "max" })
      await choose(org, { plan: "pro" })
      expect(sub.items.data[0]!.price.lookup_key).toBe("plan_pro_founding_monthly")
      expect((await call(world, "GET", "/v1/pricing")).json.founding_offer).toMatchObject({
        taken: before.taken + 1,
        status: "open"
      })
      // Back on Pay as you go the offer stays used: the plan page must not offer it again.
      await choose(org, { plan: "payg" })
      expect(await planOf(org.orgId)).toBe("payg")
      expect(await claimOf()).toBe("used")
      expect((await choose(org, { plan: "pro", offer: "founding-pro" })).status).toBe(409)
    })

    it("answers 409 offer_unavailable when every seat is taken", async () => {
      const taken = (await call(world, "GET", "/v1/pricing")).json.founding_offer.taken
      await world.db.query(
        `WITH o AS (INSERT INTO orgs (id, name, plan, created_at) SELECT gen_random_uuid(), 'founder', 'pro', now()
                  FROM generate_series(1, $1) RETURNING id)
       INSERT INTO founding_offer_claims (org_id, payment_id, status, created_at, taken_at) SELECT id, gen_random_uuid(), 'taken', now(), now() FROM o`,
        [100 - taken]
      )
      expect((await call(world, "GET", "/v1/pricing")).json.founding_offer).toMatchObject({
        taken: 100,
        remaining: 0,
        status: "sold_out"
      })
      const org = await newOrg(world)
      const answer = await choose(org, { plan: "pro", offer: "founding-pro" })
      expect(answer.status).toBe(409)
      expect(answer.json).toEqual(errorBody(world, "offer_unavailable", false, "All 100 founding seats are taken"))
      const [count] = await world.db.query(`SELECT count(*)::int AS n FROM payments WHERE org_id = $1`, [org.orgId])
      expect(count.n).toBe(0)
    })
  })
}
