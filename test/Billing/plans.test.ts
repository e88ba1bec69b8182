import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { seedAgent, type SeededOrg } from "../support/fixtures.js"
import { expectLedgerInvariant } from "../support/ledgerChecks.js"
import { call, eventually, startWorld, type World } from "../support/world.js"
import { errorBody, newOrg } from "./support.js"

/**
 * Plans: the monthly fee paid through the provider, limits following the plan at once, a
 * downgrade keeping what exists, renewals on the saved card, and the founding offer.
 */
let world: World

beforeAll(async () => {
  world = await startWorld("billing_plans", { stripe: true, env: { PAYMENT_EXPIRY_MS: "1500" } })
})

afterAll(async () => {
  await world?.close()
})

const choose = (org: SeededOrg, body: unknown) =>
  call(world, "POST", `/v1/orgs/${org.orgId}/billing/plan`, { token: org.owner.sessionToken, body })

const pay = async (org: SeededOrg, answer: any, paymentMethod = "pm_card_visa") => {
  await world.stripe.browserConfirm(answer.payment.provider_payment_id, answer.client_secret, paymentMethod)
  return call(world, "POST", `/v1/orgs/${org.orgId}/billing/payments/${answer.payment.id}/confirm`, {
    token: org.owner.sessionToken
  })
}

const planOf = async (orgId: string) => (await world.db.query(`SELECT plan FROM orgs WHERE id = $1`, [orgId]))[0]!.plan

const newAgent = (org: SeededOrg) =>
  call(world, "POST", `/v1/orgs/${org.orgId}/agents`, {
    token: org.owner.sessionToken,
    body: { name: `agent ${Math.random()}` }
  })

describe("changing plan", () => {
  it("moves to Pro when its fee is paid, limits following at once; a downgrade keeps agents and refuses new ones", async () => {
    const org = await newOrg(world)
    for (let i = 0; i < 5; i++) await seedAgent(world.db, org.orgId)
    expect((await newAgent(org)).status).toBe(402)

    const started = await choose(org, { plan: "pro" })
    expect(started.status).toBe(200)
    expect(started.json).toMatchObject({
      plan: "payg",
      payment: {
        purpose: "plan",
        plan: "pro",
        amount: "99.00",
        currency: "usd",
        credits: { credits: "0" },
        status: "pending"
      },
      client_secret: expect.any(String)
    })
    expect(await planOf(org.orgId)).toBe("payg")
    const paid = await pay(org, started.json)
    expect(paid.json.payment.status).toBe("succeeded")
    expect(await planOf(org.orgId)).toBe("pro")
    expect((await newAgent(org)).status).toBe(201)

    const summary = await call(world, "GET", `/v1/orgs/${org.orgId}/billing`, { token: org.owner.sessionToken })
    expect(summary.json.plan).toMatchObject({ id: "pro", name: "Pro", monthly_fee_usd: "99.00", founding_offer: null })
    const renews = Date.parse(summary.json.plan.renews_at)
    expect(renews - Date.now()).toBeGreaterThan(27 * 86_400_000)
    expect(summary.json.card).toMatchObject({ last4: "4242" })
    await world.smtp.waitFor(org.owner.email, (m) => m.subject.includes("Receipt") && m.text.includes("Plan: pro"))

    const again = await choose(org, { plan: "pro" })
    expect(again.status).toBe(409)
    expect(again.json.error.code).toBe("conflict")

    const down = await choose(org, { plan: "payg" })
    expect(down.json).toMatchObject({ plan: "payg", payment: null })
    expect(await planOf(org.orgId)).toBe("payg")
    const [active] = await world.db.query(
      `SELECT count(*)::int AS n FROM agents WHERE org_id = $1 AND status = 'active'`,
      [org.orgId]
    )
    expect(active.n).toBe(6)
    const refused = await newAgent(org)
    expect(refused.status).toBe(402)
    expect(refused.json.error.code).toBe("plan_limit")
    await expectLedgerInvariant(world.db)
  })

  it("renews on the saved card when the month ends, and returns to Pay as you go when the card fails", async () => {
    const org = await newOrg(world)
    await pay(org, (await choose(org, { plan: "max" })).json)
    expect(await planOf(org.orgId)).toBe("max")
    const [before] = await world.db.query(`SELECT plan_period_end FROM billing_profiles WHERE org_id = $1`, [org.orgId])
    const ended = new Date(Date.now() - 1_000)
    await world.db.query(`UPDATE billing_profiles SET plan_period_end = $2 WHERE org_id = $1`, [org.orgId, ended])
    await eventually(async () => {
      const [row] = await world.db.query(`SELECT plan_period_end FROM billing_profiles WHERE org_id = $1`, [org.orgId])
      return row.plan_period_end > ended
    }, { what: "the renewal" })
    const renewals = await world.db.query(
      `SELECT status, amount_minor::text FROM payments WHERE org_id = $1 AND purpose = 'plan' ORDER BY created_at`,
      [org.orgId]
    )
    expect(renewals).toEqual([{ status: "succeeded", amount_minor: "49900" }, {
      status: "succeeded",
      amount_minor: "49900"
    }])
    expect(before.plan_period_end).toBeInstanceOf(Date)

    const [profile] = await world.db.query(`SELECT card_payment_method_id FROM billing_profiles WHERE org_id = $1`, [
      org.orgId
    ])
    world.stripe.setBehaviour(profile.card_payment_method_id, "declined")
    await world.db.query(
      `UPDATE billing_profiles SET plan_period_end = now() - interval '1 second' WHERE org_id = $1`,
      [org.orgId]
    )
    await eventually(async () => (await planOf(org.orgId)) === "payg", { what: "the plan to end" })
    const mail = await world.smtp.waitFor(org.owner.email, (m) => m.subject.includes("plan ended"))
    expect(mail.text).toContain("Your card was declined.")
  })
})

describe("the founding offer", () => {
  it("gives Pro at the founding fee once per org, and shows the seats taken in /v1/pricing", async () => {
    const before = (await call(world, "GET", "/v1/pricing")).json.founding_offer
    const org = await newOrg(world)
    const started = await choose(org, { plan: "pro", offer: "founding-pro" })
    expect(started.json.payment).toMatchObject({ amount: "49.00", offer: "founding-pro" })
    // The seat is reserved while the payment is under way.
    expect((await call(world, "GET", "/v1/pricing")).json.founding_offer.taken).toBe(before.taken + 1)
    const second = await choose(org, { plan: "pro", offer: "founding-pro" })
    expect(second.status).toBe(409)
    expect(second.json).toEqual(
      errorBody(world, "offer_unavailable", false, expect.stringContaining("already under way"))
    )
    await pay(org, started.json)
    expect(await planOf(org.orgId)).toBe("pro")
    const summary = await call(world, "GET", `/v1/orgs/${org.orgId}/billing`, { token: org.owner.sessionToken })
    expect(summary.json.plan).toMatchObject({ id: "pro", monthly_fee_usd: "49.00", founding_offer: "founding-pro" })
    const used = await choose(org, { plan: "pro", offer: "founding-pro" })
    expect(used.status).toBe(409)
    expect(used.json).toEqual(
      errorBody(world, "offer_unavailable", false, "This org has already used the founding offer (once per org)")
    )
    expect((await call(world, "GET", "/v1/pricing")).json.founding_offer).toMatchObject({
      taken: before.taken + 1,
      status: "open"
    })
  })

  it("gives a seat back when its payment expires unpaid", async () => {
    const before = (await call(world, "GET", "/v1/pricing")).json.founding_offer.taken
    const org = await newOrg(world)
    const started = await choose(org, { plan: "pro", offer: "founding-pro" })
    expect(started.status).toBe(200)
    await eventually(async () => {
      const [row] = await world.db.query(`SELECT status FROM payments WHERE id = $1`, [started.json.payment.id])
      return row.status === "canceled"
    }, { what: "the payment to expire" })
    expect(world.stripe.paymentIntents.get(started.json.payment.provider_payment_id)!.status).toBe("canceled")
    expect((await call(world, "GET", "/v1/pricing")).json.founding_offer.taken).toBe(before)
    expect((await choose(org, { plan: "pro", offer: "founding-pro" })).status).toBe(200)
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
