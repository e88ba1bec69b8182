import { expect, layer } from "@effect/vitest"
import { Duration, Effect, Layer, TestClock, TestContext } from "effect"
import { PaymentSweep } from "../../src/Services/Billing/PaymentSweep.js"
import { PlanChanges } from "../../src/Services/Billing/PlanChanges.js"
import { type TopUpRequest, TopUps } from "../../src/Services/Billing/TopUps.js"
import { actorOf, type SeededOrg } from "../support/fixtures.js"
import { billingTier, StripeTest, SuiteDatabase } from "../support/testLayers.js"
import { atRealTime, balance, ownerOrg } from "./serviceSupport.js"

/**
 * Checkouts nobody finishes, as rules of the billing sweep (its one round, PaymentSweep, run
 * by the test; Stripe the emulator over its socket): once PAYMENT_EXPIRY_MS (an hour) has
 * passed on the TestClock the sweep expires the session at Stripe and ends the payment,
 * giving back its cap allowance or its founding seat; a session that was paid but never
 * heard of (no return, no webhook) is credited by the same sweep instead.
 */
const dashboardUrl = "http://127.0.0.1:1/dashboard"

const startCheckout = (org: SeededOrg, body: TopUpRequest) =>
  Effect.flatMap(TopUps, (topUps) => topUps.start(actorOf(org), body, { dashboardUrl }))

const choosePlan = (org: SeededOrg, offer: string) =>
  Effect.flatMap(PlanChanges, (plans) => plans.change(actorOf(org), { plan: "pro", offer }, { dashboardUrl }))

/** Past the payment expiry (an hour): the sweep's round then ends what nobody finished. */
const sweepAfterExpiry = Effect.gen(function*() {
  yield* TestClock.adjust(Duration.minutes(61))
  yield* (yield* PaymentSweep).sweepOpenPayments
})

const statusOf = (paymentId: string) =>
  Effect.flatMap(
    SuiteDatabase,
    (db) =>
      Effect.promise(async () =>
        (await db.query(`SELECT status FROM payments WHERE id = $1`, [paymentId]))[0]?.status as string
      )
  )

const sessionIdOf = (checkoutUrl: string) => new URL(checkoutUrl).pathname.split("/").pop()!

// The test services (TestClock) come with the suite's own layer, whatever ran before it in the fork.
layer(Layer.merge(billingTier("billing_checkout_expiry"), TestContext.TestContext))((it) => {
  it.effect("expires an unpaid session at Stripe and gives back its cap allowance", () =>
    Effect.gen(function*() {
      yield* atRealTime
      const stripe = yield* StripeTest
      const org = yield* ownerOrg({ createdDaysAgo: 1 })
      const body = { amount_usd: "200" }
      const started = yield* startCheckout(org, body)
      // The whole cap is taken while the session is open.
      expect((yield* Effect.flip(startCheckout(org, body)))._tag).toBe("topup_cap")
      yield* sweepAfterExpiry
      expect(yield* statusOf(started.payment.id)).toBe("canceled")
      expect(stripe.checkoutSessions.get(sessionIdOf(started.checkoutUrl!))!.status).toBe("expired")
      const again = yield* startCheckout(org, body)
      expect(again.payment.status).toBe("pending")
    }))

  it.effect("credits a session paid at Stripe that nobody reported", () =>
    Effect.gen(function*() {
      yield* atRealTime
      const stripe = yield* StripeTest
      const org = yield* ownerOrg()
      const before = yield* balance(org.orgId)
      const started = yield* startCheckout(org, { credits: 10_000 })
      const paid = yield* Effect.promise(() => stripe.payCheckout(started.checkoutUrl!, "4242424242424242"))
      expect(paid.status).toBe(303)
      yield* sweepAfterExpiry
      expect(yield* statusOf(started.payment.id)).toBe("succeeded")
      expect(yield* balance(org.orgId)).toBe(before + 10_000n)
    }))

  it.effect("gives a founding seat back when its checkout expires unpaid", () =>
    Effect.gen(function*() {
      yield* atRealTime
      const stripe = yield* StripeTest
      const plans = yield* PlanChanges
      const before = (yield* plans.offerStatus).taken
      const org = yield* ownerOrg()
      const started = yield* choosePlan(org, "founding-pro")
      expect(started._tag).toBe("checkout")
      const payment = started._tag === "checkout" ? started.payment.payment : undefined
      expect((yield* plans.offerStatus).taken).toBe(before + 1)
      yield* sweepAfterExpiry
      expect(yield* statusOf(payment!.id)).toBe("canceled")
      const session = [...stripe.checkoutSessions.values()].find((s) =>
        s.url === null && s.metadata.payment_id === payment!.id
      )
      expect(session?.status).toBe("expired")
      expect((yield* plans.offerStatus).taken).toBe(before)
      expect((yield* choosePlan(org, "founding-pro"))._tag).toBe("checkout")
    }))
})
