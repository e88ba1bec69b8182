import { describe, expect, layer } from "@effect/vitest"
import { Effect, Layer, TestContext } from "effect"
import { expectLedgerInvariant } from "../support/ledgerChecks.js"
import { billingTier, StripeTest, SuiteDatabase } from "../support/testLayers.js"
import {
  adminSets,
  atRealTime,
  balance,
  confirm,
  creditedTopUp,
  delivered,
  entriesOf,
  frozen,
  lastEvent,
  ownerOrg,
  paidTopUp,
  shown
} from "./serviceSupport.js"

/**
 * Money a payment gives back, as rules on the billing services (Stripe the emulator over
 * its socket, events handed to the webhook's service signed): refunds and disputes of one
 * payment add up to at most its amount, a dispute's closing gives back (won) or keeps
 * (lost) what its opening took, and the org is frozen while a dispute is open or lost,
 * coherently with administrators' freezes and unfreezes. The property test over event
 * orders is eventOrders.test.ts; the webhook route's wire is billing.test.ts's.
 */
const ledgerInvariant = Effect.flatMap(SuiteDatabase, (db) => Effect.promise(() => expectLedgerInvariant(db)))

// The test services (TestClock) come with the suite's own layer, whatever ran before it in the fork.
layer(Layer.merge(billingTier("billing_returns"), TestContext.TestContext))((it) => {
  describe("refunds and disputes of one payment add up", () => {
    it.effect("takes back 15,000 credits for $5 refunded and then $10 disputed of a $20 payment", () =>
      Effect.gen(function*() {
        yield* atRealTime
        const stripe = yield* StripeTest
        const { org, payment } = yield* creditedTopUp(20_000)
        const pi = payment.provider_payment_id!
        const before = yield* balance(org.orgId)
        yield* delivered(stripe.refund(pi, 500))
        expect(yield* balance(org.orgId)).toBe(before - 5_000n)
        yield* delivered(stripe.dispute(pi, 1_000))
        expect(yield* balance(org.orgId)).toBe(before - 15_000n)
        expect((yield* entriesOf(org.orgId, payment.id)).map((e) => e.amount)).toEqual(["20000", "-5000", "-10000"])
        expect(yield* shown(org, payment.id)).toMatchObject({
          status: "disputed",
          refunded: "5.000",
          disputed: "10.000",
          credits_taken_back: { credits: "15000" }
        })
        yield* ledgerInvariant
      }))

    it.effect("never takes back more than the payment: a dispute after a full refund, a refund after a dispute", () =>
      Effect.gen(function*() {
        yield* atRealTime
        const stripe = yield* StripeTest
        const first = yield* creditedTopUp(20_000)
        const firstPi = first.payment.provider_payment_id!
        const before = yield* balance(first.org.orgId)
        yield* delivered(stripe.refund(firstPi, 2_000))
        yield* delivered(stripe.dispute(firstPi, 2_000))
        expect(yield* balance(first.org.orgId)).toBe(before - 20_000n)

        const second = yield* creditedTopUp(20_000)
        const secondPi = second.payment.provider_payment_id!
        const start = yield* balance(second.org.orgId)
        yield* delivered(stripe.dispute(secondPi, 1_000))
        expect(yield* balance(second.org.orgId)).toBe(start - 10_000n)
        yield* delivered(stripe.refund(secondPi, 1_500))
        expect(yield* balance(second.org.orgId)).toBe(start - 20_000n)
        expect(yield* shown(second.org, second.payment.id)).toMatchObject({ credits_taken_back: { credits: "20000" } })
        yield* ledgerInvariant
      }))

    it.effect(
      "credits a payment whose refund or dispute came before its success, and takes the returned money back at once",
      () =>
        Effect.gen(function*() {
          yield* atRealTime
          const stripe = yield* StripeTest
          const org = yield* ownerOrg()
          const before = yield* balance(org.orgId)
          const refunded = (yield* paidTopUp(org, { credits: 20_000 })).payment
          yield* delivered(stripe.refund(refunded.provider_payment_id!, 2_000))
          expect(yield* balance(org.orgId)).toBe(before)
          yield* delivered(yield* lastEvent("payment_intent.succeeded", refunded.provider_payment_id!))
          expect(yield* balance(org.orgId)).toBe(before)
          expect(yield* entriesOf(org.orgId, refunded.id)).toEqual([
            expect.objectContaining({ kind: "top_up", amount: "20000" }),
            expect.objectContaining({ kind: "adjustment", amount: "-20000", note: expect.stringMatching(/^Refund of/) })
          ])
          expect(yield* shown(org, refunded.id)).toMatchObject({
            status: "refunded",
            credits_taken_back: { credits: "20000" }
          })

          const disputed = (yield* paidTopUp(org, { credits: 10_000 })).payment
          yield* delivered(stripe.dispute(disputed.provider_payment_id!, 1_000))
          expect(yield* frozen(org.orgId)).toBe(true)
          // The client coming back is a success path too.
          yield* confirm(org, disputed.id)
          expect(yield* balance(org.orgId)).toBe(before)
          expect(yield* frozen(org.orgId)).toBe(true)
          yield* ledgerInvariant
        })
    )

    it.effect("ends the same when every event arrives at once, each several times", () =>
      Effect.gen(function*() {
        yield* atRealTime
        const stripe = yield* StripeTest
        const org = yield* ownerOrg()
        const before = yield* balance(org.orgId)
        const payment = (yield* paidTopUp(org, { credits: 20_000 })).payment
        const piId = payment.provider_payment_id!
        const events = [
          stripe.lastEvent("payment_intent.succeeded", piId),
          stripe.refund(piId, 300),
          stripe.refund(piId, 200),
          stripe.dispute(piId, 1_000),
          stripe.closeDispute(piId, "lost")
        ]
        yield* Effect.all(
          [
            ...events.flatMap((event) => Array.from({ length: 4 }, () => delivered(event))),
            confirm(org, payment.id),
            confirm(org, payment.id)
          ],
          { concurrency: "unbounded" }
        )
        // $5 refunded and $10 lost of $20: 15,000 of the 20,000 credits back to the card holder.
        expect(yield* balance(org.orgId)).toBe(before + 5_000n)
        expect((yield* entriesOf(org.orgId, payment.id)).reduce((sum, e) => sum + BigInt(e.amount), 0n)).toBe(5_000n)
        expect(yield* frozen(org.orgId)).toBe(true)
        yield* ledgerInvariant
      }))
  })

  describe("a dispute's closing", () => {
    it.effect("won: gives back the disputed credits and lifts the freeze; refunds stay taken back", () =>
      Effect.gen(function*() {
        yield* atRealTime
        const stripe = yield* StripeTest
        const { org, payment } = yield* creditedTopUp(20_000)
        const pi = payment.provider_payment_id!
        const before = yield* balance(org.orgId)
        yield* delivered(stripe.refund(pi, 500))
        yield* delivered(stripe.dispute(pi, 1_000))
        expect(yield* frozen(org.orgId)).toBe(true)
        const won = stripe.closeDispute(pi, "won")
        expect(yield* delivered(won)).toEqual({ received: true, handled: true, duplicate: false })
        expect(yield* delivered(won)).toEqual({ received: true, handled: true, duplicate: true })
        expect(yield* balance(org.orgId)).toBe(before - 5_000n)
        expect(yield* frozen(org.orgId)).toBe(false)
        expect(yield* entriesOf(org.orgId, payment.id)).toEqual([
          expect.objectContaining({ kind: "top_up", amount: "20000" }),
          expect.objectContaining({ amount: "-5000", note: expect.stringMatching(/^Refund of/) }),
          expect.objectContaining({ amount: "-10000", note: expect.stringMatching(/^Chargeback of/) }),
          expect.objectContaining({
            kind: "adjustment",
            amount: "10000",
            note: expect.stringMatching(/^Dispute won on/)
          })
        ])
        expect(yield* shown(org, payment.id)).toMatchObject({
          status: "partially_refunded",
          disputed: "10.000",
          credits_taken_back: { credits: "5000" }
        })
        yield* ledgerInvariant
      }))

    it.effect(
      "lost: the credits stay taken back and the org frozen until an administrator unfreezes; a late opening does not freeze again",
      () =>
        Effect.gen(function*() {
          yield* atRealTime
          const stripe = yield* StripeTest
          const { org, payment } = yield* creditedTopUp(20_000)
          const pi = payment.provider_payment_id!
          const before = yield* balance(org.orgId)
          // The closing arrives first.
          const created = stripe.dispute(pi, 2_000)
          yield* delivered(stripe.closeDispute(pi, "lost"))
          expect(yield* balance(org.orgId)).toBe(before - 20_000n)
          expect(yield* frozen(org.orgId)).toBe(true)
          expect(yield* adminSets(org.orgId, "unfreeze")).toEqual({ org_id: org.orgId, credits_frozen: false })
          yield* delivered(created)
          expect(yield* frozen(org.orgId)).toBe(false)
          expect(yield* balance(org.orgId)).toBe(before - 20_000n)
          expect(yield* shown(org, payment.id)).toMatchObject({
            status: "disputed",
            credits_taken_back: { credits: "20000" }
          })
          yield* ledgerInvariant
        })
    )

    it.effect("won: leaves the freeze of an administrator, and of another dispute still open", () =>
      Effect.gen(function*() {
        yield* atRealTime
        const stripe = yield* StripeTest
        const { org, payment } = yield* creditedTopUp(20_000)
        yield* delivered(stripe.dispute(payment.provider_payment_id!, 2_000))
        yield* adminSets(org.orgId, "freeze", "card testing")
        yield* delivered(stripe.closeDispute(payment.provider_payment_id!, "won"))
        expect(yield* frozen(org.orgId)).toBe(true)

        const other = yield* creditedTopUp(10_000)
        const second = yield* creditedTopUp(10_000, other.org)
        yield* delivered(stripe.dispute(other.payment.provider_payment_id!, 1_000))
        yield* delivered(stripe.dispute(second.payment.provider_payment_id!, 1_000))
        yield* delivered(stripe.closeDispute(other.payment.provider_payment_id!, "won"))
        expect(yield* frozen(other.org.orgId)).toBe(true)
        yield* delivered(stripe.closeDispute(second.payment.provider_payment_id!, "won"))
        expect(yield* frozen(other.org.orgId)).toBe(false)
        yield* ledgerInvariant
      }))
  })
})
