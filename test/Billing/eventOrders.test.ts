import type { StoredEvent } from "@agent-gateway/stripe-emulator"
import { expect, layer } from "@effect/vitest"
import { Effect, Layer, Runtime, TestContext } from "effect"
import fc from "fast-check"
import { balanceOf, expectLedgerInvariant } from "../support/ledgerChecks.js"
import { billingTier, StripeTest, SuiteDatabase } from "../support/testLayers.js"
import { atRealTime, type BillingTierContext, confirm, deliver, ownerOrg, paidTopUp, shown } from "./serviceSupport.js"
import { frozenOf, paymentEntries } from "./support.js"

/**
 * Payment events in any order give the same ledger, as a rule of the billing services (Stripe
 * the emulator over its socket). For a payment paid at Stripe, a scenario picks its refunds
 * (partial or full), a dispute (left open, won or lost) and how the success is learnt
 * (webhook, the client's confirmation, or both); every event is handed to the webhook's
 * service, signed, one to three times, in a random order, in small concurrent batches. After
 * each batch the org must hold exactly what the events delivered so far say, worked out
 * here on its own: the credits paid less those for the money returned (refunds plus a
 * dispute open or lost, at most the payment, rounded up in credits), never more; frozen
 * exactly while the dispute is open or lost.
 */

type Outcome = "open" | "won" | "lost"

interface Scenario {
  readonly cents: number
  /** Refunds, in minor units, made one after another (the fake caps the total at the payment). */
  readonly refunds: ReadonlyArray<number>
  readonly dispute: { readonly cents: number; readonly outcome: Outcome } | null
  readonly success: "webhook" | "confirm" | "both"
  /** Per delivery step: how many copies, and a sort key placing each copy in the order. */
  readonly copies: ReadonlyArray<ReadonlyArray<number>>
  /** Sizes of the concurrent batches the ordered deliveries are cut into. */
  readonly batches: ReadonlyArray<number>
}

type Step =
  | { readonly kind: "success_webhook"; readonly event: StoredEvent }
  | { readonly kind: "success_confirm" }
  | { readonly kind: "refund"; readonly event: StoredEvent; readonly refundedCents: number }
  | { readonly kind: "dispute_created"; readonly event: StoredEvent }
  | { readonly kind: "dispute_closed"; readonly event: StoredEvent; readonly outcome: "won" | "lost" }

const MAX_STEPS = 6

const scenarios: fc.Arbitrary<Scenario> = fc.integer({ min: 500, max: 5_000 }).chain((cents) =>
  fc.record({
    cents: fc.constant(cents),
    refunds: fc.array(fc.oneof(fc.integer({ min: 1, max: cents }), fc.constant(cents)), { maxLength: 2 }),
    dispute: fc.option(
      fc.record({
        cents: fc.oneof(fc.integer({ min: 1, max: cents }), fc.constant(cents)),
        outcome: fc.constantFrom<Outcome>("open", "won", "lost")
      }),
      { nil: null }
    ),
    success: fc.constantFrom("webhook" as const, "confirm" as const, "both" as const),
    copies: fc.array(fc.array(fc.nat(), { minLength: 1, maxLength: 3 }), {
      minLength: MAX_STEPS,
      maxLength: MAX_STEPS
    }),
    batches: fc.array(fc.integer({ min: 1, max: 3 }), { minLength: 20, maxLength: 20 })
  })
)

/** What the delivered steps say the payment leaves the org, worked out independently of the service. */
const expected = (scenario: Scenario, credits: bigint, delivered: ReadonlyArray<Step>) => {
  const amount = BigInt(scenario.cents)
  const paid = delivered.some((s) => s.kind === "success_webhook" || s.kind === "success_confirm")
  let refunded = 0n
  for (const step of delivered) {
    if (step.kind === "refund" && BigInt(step.refundedCents) > refunded) refunded = BigInt(step.refundedCents)
  }
  const closed = delivered.find((s) => s.kind === "dispute_closed")
  const status = closed?.kind === "dispute_closed"
    ? closed.outcome
    : delivered.some((s) => s.kind === "dispute_created")
    ? "open"
    : null
  const holding = status === "open" || status === "lost"
  const disputed = holding && scenario.dispute !== null ? BigInt(scenario.dispute.cents) : 0n
  const returned = refunded + disputed < amount ? refunded + disputed : amount
  const takenBack = paid ? (credits * returned + amount - 1n) / amount : 0n
  return { kept: paid ? credits - takenBack : 0n, takenBack, frozen: holding }
}

// The test services (TestClock) come with the suite's own layer, whatever ran before it in the fork.
layer(Layer.merge(billingTier("billing_event_orders"), TestContext.TestContext))((it) => {
  it.effect(
    "payment events in any order leave the ledger what the delivered events say, whatever the order, duplicates and concurrency",
    () =>
      Effect.gen(function*() {
        yield* atRealTime
        const stripe = yield* StripeTest
        const db = yield* SuiteDatabase
        const run = Runtime.runPromise(yield* Effect.runtime<BillingTierContext>())
        let runs = 0
        yield* Effect.promise(() =>
          fc.assert(
            fc.asyncProperty(scenarios, async (scenario) => {
              runs++
              const org = await run(ownerOrg())
              const credits = BigInt(scenario.cents) * 10n
              const started = await run(paidTopUp(org, { credits: Number(credits) }))
              const payment = started.payment
              const piId = payment.provider_payment_id!
              const before = await balanceOf(db, org.orgId)

              // Every event Stripe would send for this story, made before any is delivered.
              const steps: Array<Step> = []
              if (scenario.success !== "confirm") {
                steps.push({ kind: "success_webhook", event: stripe.lastEvent("payment_intent.succeeded", piId) })
              }
              if (scenario.success !== "webhook") steps.push({ kind: "success_confirm" })
              for (const cents of scenario.refunds) {
                const event = stripe.refund(piId, cents)
                steps.push({
                  kind: "refund",
                  event,
                  refundedCents: JSON.parse(event.payload).data.object.amount_refunded
                })
              }
              if (scenario.dispute !== null) {
                steps.push({ kind: "dispute_created", event: stripe.dispute(piId, scenario.dispute.cents) })
                if (scenario.dispute.outcome !== "open") {
                  const outcome = scenario.dispute.outcome
                  steps.push({ kind: "dispute_closed", event: stripe.closeDispute(piId, outcome), outcome })
                }
              }

              // Each step one to three times, every copy at its random place.
              const order = steps
                .flatMap((step, i) => scenario.copies[i]!.map((key) => ({ step, key })))
                .sort((a, b) => a.key - b.key)
                .map((copy) => copy.step)

              const handOver = async (step: Step) => {
                if (step.kind === "success_confirm") {
                  await run(confirm(org, payment.id))
                  return
                }
                expect(await run(deliver(step.event))).toMatchObject({ received: true, handled: true })
              }

              const delivered: Array<Step> = []
              let at = 0
              for (const size of scenario.batches) {
                if (at >= order.length) break
                const batch = order.slice(at, at + size)
                at += batch.length
                await Promise.all(batch.map(handOver))
                delivered.push(...batch)

                const want = expected(scenario, credits, delivered)
                const entries = await paymentEntries(db, org.orgId, payment.id)
                const net = entries.reduce((sum, e) => sum + BigInt(e.amount), 0n)
                const context = JSON.stringify({ scenario, delivered: delivered.map((s) => s.kind), entries })
                expect(net, context).toBe(want.kept)
                // Nothing else moves this org's balance: it holds exactly what the payment leaves.
                expect(await balanceOf(db, org.orgId), context).toBe(before + want.kept)
                expect(await frozenOf(db, org.orgId), context).toBe(want.frozen)
              }
              expect(at).toBe(order.length)

              const final = expected(scenario, credits, delivered)
              const wire = await run(shown(org, payment.id))
              expect(wire.credits_taken_back.credits).toBe(final.takenBack.toString())
              expect(wire.status).toBe(
                final.frozen ? "disputed" : final.takenBack === credits ? "refunded" : final.takenBack > 0n
                  ? "partially_refunded"
                  : "succeeded"
              )
            }),
            { seed: 35, numRuns: 50, endOnFailure: true }
          )
        )
        expect(runs).toBeGreaterThanOrEqual(50)
        yield* Effect.promise(() => expectLedgerInvariant(db))
      }),
    600_000
  )
})
