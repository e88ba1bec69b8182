import { describe, expect, it, layer } from "@effect/vitest"
import { Effect, Either, Layer, TestContext } from "effect"
import { capState, inrPerUsd, topUpCap, usdCentsToPaise, withinCap } from "../../src/Domain/Billing.js"
import { parseEcbDaily } from "../../src/Services/Billing/Fx.js"
import { paymentView } from "../../src/Services/Billing/PaymentRecords.js"
import { Summary } from "../../src/Services/Billing/Summary.js"
import type { TopUpRequest } from "../../src/Services/Billing/TopUps.js"
import { ecbXml } from "../support/fakeEcb.js"
import { actorOf, type SeededOrg } from "../support/fixtures.js"
import { expectLedgerInvariant } from "../support/ledgerChecks.js"
import { billingTier, EcbTest, StripeTest, SuiteDatabase } from "../support/testLayers.js"
import { atRealTime, balance, confirm, onTheWire, ownerOrg, paidTopUp, startTopUp } from "./serviceSupport.js"

/**
 * The $200 cap of an org's first 14 days, and INR top-ups at the ECB's rate: the arithmetic,
 * then the rules on the billing services (Stripe the emulator, the ECB's file on their
 * sockets). The routes' status and body for these refusals are billing.test.ts's.
 */
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
})

/** A top-up's start: the payment started, or the refusal with its code (the typed error's tag). */
const topUp = (org: SeededOrg, body: TopUpRequest) => Effect.either(startTopUp(org, body))

const codeOf = <A>(answer: Either.Either<A, { readonly _tag: string }>) =>
  Either.isLeft(answer) ? answer.left._tag : "started"

const messageOf = <A>(answer: Either.Either<A, { readonly message: string }>) =>
  Either.isLeft(answer) ? answer.left.message : ""

const summaryOf = (org: SeededOrg) => Effect.flatMap(Summary, (summary) => summary.get(actorOf(org)))

const rows = (text: string, values: ReadonlyArray<unknown> = []) =>
  Effect.flatMap(SuiteDatabase, (db) => Effect.promise(() => db.query(text, values)))

const ledgerInvariant = Effect.flatMap(SuiteDatabase, (db) => Effect.promise(() => expectLedgerInvariant(db)))

// The test services (TestClock) come with the suite's own layer, whatever ran before it in the fork.
layer(Layer.merge(billingTier("billing_cap_fx"), TestContext.TestContext))((it) => {
  describe("the new-account cap on the services", () => {
    it.effect("lets a new org reach exactly $200, then refuses with topup_cap and what is left", () =>
      Effect.gen(function*() {
        yield* atRealTime
        const org = yield* ownerOrg()
        const first = yield* paidTopUp(org, { amount_usd: "150" })
        expect(first.payment.status).toBe("pending")
        const over = yield* topUp(org, { amount_usd: "50.01" })
        expect(codeOf(over)).toBe("topup_cap")
        expect(messageOf(over)).toContain("50000 credits ($50.000) are left until")
        const exact = yield* topUp(org, { amount_usd: "50" })
        expect(codeOf(exact)).toBe("started")
        const none = yield* topUp(org, { credits: 5000 })
        expect(codeOf(none)).toBe("topup_cap")
        expect(messageOf(none)).toContain("0 credits ($0.000) are left")
        expect((yield* summaryOf(org)).topup_cap).toMatchObject({
          applies: true,
          limit: { credits: "200000", usd: "200.000" },
          used: { credits: "200000", usd: "200.000" },
          remaining: { credits: "0", usd: "0.000" }
        })
        yield* ledgerInvariant
      }))

    it.effect("counts top-ups still being paid, so concurrent ones cannot pass it together", () =>
      Effect.gen(function*() {
        yield* atRealTime
        const org = yield* ownerOrg()
        const answers = yield* Effect.all(
          Array.from({ length: 10 }, () => topUp(org, { amount_usd: "30" })),
          { concurrency: "unbounded" }
        )
        expect(answers.filter((a) => codeOf(a) === "started")).toHaveLength(6)
        expect(answers.filter((a) => codeOf(a) === "topup_cap")).toHaveLength(4)
      }))

    it.effect("no longer applies after 14 days", () =>
      Effect.gen(function*() {
        yield* atRealTime
        const org = yield* ownerOrg({ createdDaysAgo: 15 })
        expect(codeOf(yield* topUp(org, { amount_usd: "1000" }))).toBe("started")
        expect((yield* summaryOf(org)).topup_cap).toMatchObject({ applies: false, remaining: null })
      }))
  })

  describe("USD to INR on the services", () => {
    it.effect("charges INR at a fresh rate and records the rate, its date and both amounts", () =>
      Effect.gen(function*() {
        yield* atRealTime
        const ecb = yield* EcbTest
        const stripe = yield* StripeTest
        ecb.set({ date: "2026-11-21", usd: "1.0500", inr: "88.6200" })
        yield* rows(`DELETE FROM fx_rates`)
        const org = yield* ownerOrg()
        const started = yield* paidTopUp(org, { amount_usd: "25", currency: "inr" })
        expect(onTheWire(paymentView(started.payment))).toMatchObject({
          currency: "inr",
          amount: "2110.00",
          amount_usd: "25.000",
          credits: { credits: "25000", usd: "25.000" },
          fx: { source: "ECB", inr_per_usd: "84.4000", rate_date: "2026-11-21" }
        })
        const pi = stripe.paymentIntents.get(started.payment.provider_payment_id!)!
        expect(pi).toMatchObject({ amount: 211_000, currency: "inr", setup_future_usage: null })
        const before = yield* balance(org.orgId)
        const done = yield* confirm(org, started.payment.id)
        expect(done.status).toBe("succeeded")
        expect(yield* balance(org.orgId)).toBe(before + 25_000n)
        const [row] = yield* rows(
          `SELECT fx_rate, to_char(fx_rate_date, 'YYYY-MM-DD') AS d, amount_minor::text, usd_cents::text FROM payments WHERE id = $1`,
          [started.payment.id]
        )
        expect(row).toEqual({ fx_rate: "84.4000", d: "2026-11-21", amount_minor: "211000", usd_cents: "2500" })
        expect((yield* summaryOf(org)).fx).toMatchObject({
          status: "available",
          inr_per_usd: "84.4000",
          rate_date: "2026-11-21"
        })
        yield* ledgerInvariant
      }))

    it.effect("refuses with fx_unavailable with only a stale rate, while USD goes on", () =>
      Effect.gen(function*() {
        yield* atRealTime
        const ecb = yield* EcbTest
        ecb.down()
        yield* rows(`DELETE FROM fx_rates`)
        yield* rows(
          `INSERT INTO fx_rates (rate_date, usd_per_eur, inr_per_eur, fetched_at) VALUES ('2026-11-18', '1.05', '88.62', now() - interval '37 hours')`
        )
        const org = yield* ownerOrg()
        const inr = yield* topUp(org, { amount_usd: "25", currency: "inr" })
        expect(codeOf(inr)).toBe("fx_unavailable")
        expect(messageOf(inr)).toContain("(2026-11-18, fetched")
        expect(codeOf(yield* topUp(org, { amount_usd: "25" }))).toBe("started")
        expect((yield* summaryOf(org)).fx).toMatchObject({ status: "unavailable", rate_date: "2026-11-18" })
        // A rate fetched 35 hours ago is still in force.
        yield* rows(`UPDATE fx_rates SET fetched_at = now() - interval '35 hours'`)
        expect(codeOf(yield* topUp(org, { amount_usd: "10", currency: "inr" }))).toBe("started")
      }))

    it.effect("refuses with fx_unavailable with no rate at all, and resumes when the source is back", () =>
      Effect.gen(function*() {
        yield* atRealTime
        const ecb = yield* EcbTest
        ecb.down()
        yield* rows(`DELETE FROM fx_rates`)
        const org = yield* ownerOrg()
        const inr = yield* topUp(org, { amount_usd: "25", currency: "inr" })
        expect(codeOf(inr)).toBe("fx_unavailable")
        expect(messageOf(inr)).toBe("No USD to INR rate is available; INR top-ups are paused (USD top-ups work)")
        const [count] = yield* rows(`SELECT count(*)::int AS n FROM payments WHERE org_id = $1`, [org.orgId])
        expect(count.n).toBe(0)
        ecb.set({ date: "2026-11-23", usd: "1.0400", inr: "88.4000" })
        const back = yield* startTopUp(org, { amount_usd: "25", currency: "inr" })
        const wire = onTheWire(paymentView(back.payment))
        expect(wire.fx).toEqual({ source: "ECB", inr_per_usd: "85.0000", rate_date: "2026-11-23" })
        expect(wire.amount).toBe("2125.00")
      }))

    it.effect("refuses to save a card on an INR top-up (auto-reload is USD only)", () =>
      Effect.gen(function*() {
        yield* atRealTime
        const org = yield* ownerOrg()
        const answer = yield* topUp(org, { amount_usd: "25", currency: "inr", save_card: true })
        expect(codeOf(answer)).toBe("invalid_input")
        expect(messageOf(answer)).toContain("RBI")
      }))
  })
})
