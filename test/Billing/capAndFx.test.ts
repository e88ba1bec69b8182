import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { capState, inrPerUsd, topUpCap, usdCentsToPaise, withinCap } from "../../src/Domain/Billing.js"
import { parseEcbDaily } from "../../src/Services/Billing/Fx.js"
import { ecbXml } from "../support/fakeEcb.js"
import { balanceOf, expectLedgerInvariant } from "../support/ledgerChecks.js"
import { call, startWorld, type World } from "../support/world.js"
import { errorBody, newOrg, paidTopUp } from "./support.js"

/** The $200 cap of an org's first 14 days, and INR top-ups at the ECB's rate. */
let world: World

beforeAll(async () => {
  world = await startWorld("billing_cap_fx", { stripe: true })
})

afterAll(async () => {
  await world?.close()
})

const topUp = (orgId: string, token: string, body: unknown) =>
  call(world, "POST", `/v1/orgs/${orgId}/billing/top-ups`, { token, body })

describe("the new-account cap", () => {
  it("is plain arithmetic at the boundary", () => {
    const created = new Date("2026-01-01T00:00:00Z")
    const inside = created.getTime() + 14 * 86_400_000 - 1
    expect(withinCap(capState(created, inside, 0n), 200_000n)).toBe(true)
    expect(withinCap(capState(created, inside, 0n), 200_010n)).toBe(false)
    expect(withinCap(capState(created, inside, 199_990n), 10n)).toBe(true)
    expect(withinCap(capState(created, inside, 199_990n), 20n)).toBe(false)
    expect(capState(created, inside, 150_000n).remaining).toBe(50_000n)
    // The 14 days are over: no cap.
    expect(withinCap(capState(created, created.getTime() + 14 * 86_400_000, 200_000n), 5_000_000n)).toBe(true)
    expect(topUpCap.credits).toBe(200_000n)
  })

  it("lets a new org reach exactly $200, then answers 402 topup_cap with what is left", async () => {
    const org = await newOrg(world)
    const first = await paidTopUp(world, org, { amount_usd: "150" })
    expect(first.payment.status).toBe("pending")
    const over = await topUp(org.orgId, org.owner.sessionToken, { amount_usd: "50.01" })
    expect(over.status).toBe(402)
    expect(over.json).toEqual(
      errorBody(world, "topup_cap", false, expect.stringContaining("50000 credits ($50.000) are left until"))
    )
    const exact = await topUp(org.orgId, org.owner.sessionToken, { amount_usd: "50" })
    expect(exact.status).toBe(201)
    const none = await topUp(org.orgId, org.owner.sessionToken, { credits: 5000 })
    expect(none.status).toBe(402)
    expect(none.json.error.message).toContain("0 credits ($0.000) are left")
    const summary = await call(world, "GET", `/v1/orgs/${org.orgId}/billing`, { token: org.owner.sessionToken })
    expect(summary.json.topup_cap).toMatchObject({
      applies: true,
      limit: { credits: "200000", usd: "200.000" },
      used: { credits: "200000", usd: "200.000" },
      remaining: { credits: "0", usd: "0.000" }
    })
    await expectLedgerInvariant(world.db)
  })

  it("counts top-ups still being paid, so concurrent ones cannot pass it together", async () => {
    const org = await newOrg(world)
    const answers = await Promise.all(
      Array.from({ length: 10 }, () => topUp(org.orgId, org.owner.sessionToken, { amount_usd: "30" }))
    )
    expect(answers.filter((a) => a.status === 201)).toHaveLength(6)
    expect(answers.filter((a) => a.status === 402)).toHaveLength(4)
  })

  it("no longer applies after 14 days", async () => {
    const org = await newOrg(world, { createdDaysAgo: 15 })
    const big = await topUp(org.orgId, org.owner.sessionToken, { amount_usd: "1000" })
    expect(big.status).toBe(201)
    const summary = await call(world, "GET", `/v1/orgs/${org.orgId}/billing`, { token: org.owner.sessionToken })
    expect(summary.json.topup_cap).toMatchObject({ applies: false, remaining: null })
  })
})

describe("USD to INR", () => {
  it("reads the ECB's daily XML and converts exactly", () => {
    expect(parseEcbDaily(ecbXml("2026-11-20", "1.0500", "88.6200"))).toEqual({
      date: "2026-11-20",
      usdPerEur: "1.0500",
      inrPerEur: "88.6200"
    })
    expect(parseEcbDaily("<Cube time='2026-11-20'><Cube currency='USD' rate='1.05'/></Cube>")).toBeUndefined()
    expect(inrPerUsd("1.0500", "88.6200")).toBe("84.4000")
    expect(inrPerUsd("1.0921", "90.868")).toBe("83.2048")
    expect(usdCentsToPaise(2500n, "84.4000")).toBe(211_000n)
    expect(usdCentsToPaise(1n, "83.2048")).toBe(83n)
  })

  it("charges INR at a fresh rate and records the rate, its date and both amounts", async () => {
    world.ecb.set({ date: "2026-11-21", usd: "1.0500", inr: "88.6200" })
    await world.db.query(`DELETE FROM fx_rates`)
    const org = await newOrg(world)
    const started = await paidTopUp(world, org, { amount_usd: "25", currency: "inr" })
    expect(started.payment).toMatchObject({
      currency: "inr",
      amount: "2110.00",
      amount_usd: "25.000",
      credits: { credits: "25000", usd: "25.000" },
      fx: { source: "ECB", inr_per_usd: "84.4000", rate_date: "2026-11-21" }
    })
    const pi = world.stripe.paymentIntents.get(started.payment.provider_payment_id)!
    expect(pi).toMatchObject({ amount: 211_000, currency: "inr", setup_future_usage: null })
    const before = await balanceOf(world.db, org.orgId)
    const done = await call(world, "POST", `/v1/orgs/${org.orgId}/billing/payments/${started.payment.id}/confirm`, {
      token: org.owner.sessionToken
    })
    expect(done.json.payment.status).toBe("succeeded")
    expect(await balanceOf(world.db, org.orgId)).toBe(before + 25_000n)
    const [row] = await world.db.query(
      `SELECT fx_rate, to_char(fx_rate_date, 'YYYY-MM-DD') AS d, amount_minor::text, usd_cents::text FROM payments WHERE id = $1`,
      [started.payment.id]
    )
    expect(row).toEqual({ fx_rate: "84.4000", d: "2026-11-21", amount_minor: "211000", usd_cents: "2500" })
    const summary = await call(world, "GET", `/v1/orgs/${org.orgId}/billing`, { token: org.owner.sessionToken })
    expect(summary.json.fx).toMatchObject({ status: "available", inr_per_usd: "84.4000", rate_date: "2026-11-21" })
    await expectLedgerInvariant(world.db)
  })

  it("answers 503 fx_unavailable with only a stale rate, while USD goes on", async () => {
    world.ecb.down()
    await world.db.query(`DELETE FROM fx_rates`)
    await world.db.query(
      `INSERT INTO fx_rates (rate_date, usd_per_eur, inr_per_eur, fetched_at) VALUES ('2026-11-18', '1.05', '88.62', now() - interval '37 hours')`
    )
    const org = await newOrg(world)
    const inr = await topUp(org.orgId, org.owner.sessionToken, { amount_usd: "25", currency: "inr" })
    expect(inr.status).toBe(503)
    expect(inr.json).toEqual(errorBody(world, "fx_unavailable", true, expect.stringContaining("(2026-11-18, fetched")))
    const usd = await topUp(org.orgId, org.owner.sessionToken, { amount_usd: "25" })
    expect(usd.status).toBe(201)
    const summary = await call(world, "GET", `/v1/orgs/${org.orgId}/billing`, { token: org.owner.sessionToken })
    expect(summary.json.fx).toMatchObject({ status: "unavailable", rate_date: "2026-11-18" })
    // A rate fetched 35 hours ago is still in force.
    await world.db.query(`UPDATE fx_rates SET fetched_at = now() - interval '35 hours'`)
    expect((await topUp(org.orgId, org.owner.sessionToken, { amount_usd: "10", currency: "inr" })).status).toBe(201)
  })

  it("answers 503 fx_unavailable with no rate at all, and resumes when the source is back", async () => {
    world.ecb.down()
    await world.db.query(`DELETE FROM fx_rates`)
    const org = await newOrg(world)
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
    const [count] = await world.db.query(`SELECT count(*)::int AS n FROM payments WHERE org_id = $1`, [org.orgId])
    expect(count.n).toBe(0)
    world.ecb.set({ date: "2026-11-23", usd: "1.0400", inr: "88.4000" })
    const back = await topUp(org.orgId, org.owner.sessionToken, { amount_usd: "25", currency: "inr" })
    expect(back.status).toBe(201)
    expect(back.json.payment.fx).toEqual({ source: "ECB", inr_per_usd: "85.0000", rate_date: "2026-11-23" })
    expect(back.json.payment.amount).toBe("2125.00")
  })

  it("refuses to save a card on an INR top-up (auto-reload is USD only)", async () => {
    const org = await newOrg(world)
    const answer = await topUp(org.orgId, org.owner.sessionToken, {
      amount_usd: "25",
      currency: "inr",
      save_card: true
    })
    expect(answer.status).toBe(400)
    expect(answer.json.error).toMatchObject({ code: "invalid_input", message: expect.stringContaining("RBI") })
  })
})
