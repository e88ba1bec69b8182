import { expect, layer } from "@effect/vitest"
import { Effect, Layer, TestContext } from "effect"
import { Payments } from "../../src/Services/Billing/Payments.js"
import { type TopUpRequest, TopUps } from "../../src/Services/Billing/TopUps.js"
import { actorOf, type SeededOrg } from "../support/fixtures.js"
import { billingTier, StripeTest } from "../support/testLayers.js"
import { atRealTime, confirm, onTheWire, ownerOrg, startTopUp } from "./serviceSupport.js"
import { postPage } from "./support.js"

/**
 * Payments paid with Stripe's test cards, on the billing services (Stripe the emulator over
 * its socket, the same emulator the development sandbox starts): a payment keeps the reason
 * of its latest failure; a checkout the owner cancels gives its cap allowance back and its
 * page takes no card any more; the hosted page of a session never made is not found. The
 * sandbox's own answers (its labels, its confirm route, its events to the webhook route)
 * are sandbox.test.ts's.
 */
const dashboardUrl = "http://127.0.0.1:1/dashboard"

const startCheckout = (org: SeededOrg, body: TopUpRequest) =>
  Effect.flatMap(TopUps, (topUps) => topUps.start(actorOf(org), body, { dashboardUrl }))

/** The customer pays in the browser with a test payment method (a decline is an answer too). */
const payInBrowser = (
  started: { payment: { provider_payment_id: string | null }; clientSecret: string | null },
  method: string
) =>
  Effect.flatMap(
    StripeTest,
    (stripe) =>
      Effect.promise(() =>
        stripe.browserConfirm(started.payment.provider_payment_id!, started.clientSecret!, method).catch(() =>
          undefined
        )
      )
  )

// The test services (TestClock) come with the suite's own layer, whatever ran before it in the fork.
layer(Layer.merge(billingTier("billing_test_cards"), TestContext.TestContext))((it) => {
  it.effect("keeps a payment's latest failure reason: a decline, then insufficient funds on the same client secret", () =>
    Effect.gen(function*() {
      yield* atRealTime
      const org = yield* ownerOrg()
      const started = yield* startTopUp(org, { amount_usd: "20" })
      yield* payInBrowser(started, "pm_card_chargeDeclined")
      expect(yield* confirm(org, started.payment.id)).toMatchObject({
        status: "failed",
        failure_message: "Your card was declined."
      })
      yield* payInBrowser(started, "pm_card_chargeDeclinedInsufficientFunds")
      expect(yield* confirm(org, started.payment.id)).toMatchObject({
        status: "failed",
        failure_message: "Your card has insufficient funds."
      })
      const history = yield* (yield* Payments).list(actorOf(org), 20, undefined)
      expect(history.payments.map((payment) => onTheWire(payment))).toEqual([
        expect.objectContaining({ id: started.payment.id, failure_message: "Your card has insufficient funds." })
      ])
    }))

  it.effect("gives the cap allowance back when the owner cancels a checkout, and its page no longer takes a card", () =>
    Effect.gen(function*() {
      yield* atRealTime
      const org = yield* ownerOrg()
      const started = yield* startCheckout(org, { amount_usd: "200" })
      const pageUrl = started.checkoutUrl!
      const page = yield* Effect.promise(() => fetch(pageUrl).then((r) => r.text()))
      expect(page).toContain(`billing?payment=${started.payment.id}&amp;checkout=canceled`)
      expect((yield* Effect.flip(startCheckout(org, { amount_usd: "5" })))._tag).toBe("topup_cap")

      const payments = yield* Payments
      const canceled = yield* payments.cancel(actorOf(org), started.payment.id)
      expect(canceled.status).toBe("canceled")
      const after = yield* Effect.promise(() => postPage(pageUrl, { card_number: "4242 4242 4242 4242" }))
      expect(after.status).toBe(410)
      expect(after.location).toBeNull()
      expect(after.text).toContain("This checkout has ended")
      expect((yield* payments.get(actorOf(org), started.payment.id)).status).toBe("canceled")
      expect((yield* startCheckout(org, { amount_usd: "200" })).payment.status).toBe("pending")
    }))

  it.effect("a checkout page of a session never made answers 404", () =>
    Effect.gen(function*() {
      yield* atRealTime
      const org = yield* ownerOrg()
      const started = yield* startCheckout(org, { amount_usd: "5" })
      const emulator = new URL(started.checkoutUrl!).origin
      expect((yield* Effect.promise(() => fetch(`${emulator}/c/pay/cs_test_nope`))).status).toBe(404)
    }))
})
