import { EMULATOR_WEBHOOK_SECRET, signatureHeader, type StoredEvent } from "@agent-gateway/stripe-emulator"
import { expect } from "@effect/vitest"
import { Effect, type Layer, Schema, TestClock } from "effect"
import type { OrgId, PaymentId } from "../../src/Domain/Ids.js"
import { PaymentJson } from "../../src/Domain/Payment.js"
import { paymentView } from "../../src/Services/Billing/PaymentRecords.js"
import { Payments } from "../../src/Services/Billing/Payments.js"
import { PaymentWebhooks } from "../../src/Services/Billing/PaymentWebhooks.js"
import { type TopUpRequest, TopUps } from "../../src/Services/Billing/TopUps.js"
import { CreditAdjustments } from "../../src/Services/Operations/CreditAdjustments.js"
import { actorOf, seedAdmin, type SeededOrg } from "../support/fixtures.js"
import { balanceOf } from "../support/ledgerChecks.js"
import { type billingTier, StripeTest, SuiteDatabase } from "../support/testLayers.js"
import { frozenOf, newOrg, paymentEntries } from "./support.js"

/**
 * Billing's helpers at the service tier (`billingTier` in test/support/testLayers.ts): what
 * support.ts does over HTTP, done on the services, with Stripe the emulator over its socket.
 */

/** What a billing service-tier suite's tests have in their context. */
export type BillingTierContext = Layer.Layer.Success<ReturnType<typeof billingTier>>

/**
 * The TestClock at the machine's time, where each test starts: the template's rows and the
 * emulator's objects were made then, and the new-account cap counts from the org's creation.
 */
export const atRealTime = TestClock.setTime(Date.now())

/** A payment as its routes write it on the wire. */
export const onTheWire = Schema.encodeSync(PaymentJson)

/** An org with an owner, optionally made `createdDaysAgo` days ago (the new-account cap). */
export const ownerOrg = (options: { createdDaysAgo?: number } = {}) =>
  Effect.flatMap(SuiteDatabase, (db) => Effect.promise(() => newOrg({ db }, options)))

/** Starts a top-up as the org's owner (the top-up route's work); fails with the typed error. */
export const startTopUp = (org: SeededOrg, body: TopUpRequest) =>
  Effect.flatMap(TopUps, (topUps) => topUps.start(actorOf(org), body))

/** Starts a top-up and pays it in the "browser" with a test payment method; answers the started payment. */
export const paidTopUp = (org: SeededOrg, body: TopUpRequest, paymentMethod = "pm_card_visa") =>
  Effect.gen(function*() {
    const started = yield* startTopUp(org, body).pipe(Effect.orDie)
    const stripe = yield* StripeTest
    yield* Effect.promise(() =>
      stripe.browserConfirm(started.payment.provider_payment_id!, started.clientSecret!, paymentMethod)
        .catch(() => undefined)
    )
    return started
  })

/** Hands a Stripe event to the webhook's service, signed as Stripe signs it; answers what the route would. */
export const deliver = (event: Pick<StoredEvent, "payload">, secret = EMULATOR_WEBHOOK_SECRET) =>
  Effect.flatMap(
    PaymentWebhooks,
    (webhooks) => webhooks.receive(event.payload, signatureHeader(event.payload, secret))
  )

/** Delivers an event that must be handled (the route's 200). */
export const delivered = (event: Pick<StoredEvent, "payload">) =>
  Effect.tap(deliver(event).pipe(Effect.orDie), (answer) => expect(answer).toMatchObject({ received: true }))

/** The event Stripe sent last of `type` about a payment intent. */
export const lastEvent = (type: string, paymentIntentId: string) =>
  Effect.map(StripeTest, (stripe) => stripe.lastEvent(type, paymentIntentId))

/** An org's top-up of `credits`, paid and credited through the `payment_intent.succeeded` event. */
export const creditedTopUp = (credits: number, org?: SeededOrg) =>
  Effect.gen(function*() {
    const owner = org ?? (yield* ownerOrg())
    const started = yield* paidTopUp(owner, { credits })
    yield* delivered(yield* lastEvent("payment_intent.succeeded", started.payment.provider_payment_id!))
    return { org: owner, payment: started.payment }
  })

/** The client came back (the confirm route's work); answers the payment as the route shows it. */
export const confirm = (org: SeededOrg, paymentId: PaymentId) =>
  Effect.flatMap(
    Payments,
    (payments) => Effect.map(payments.confirm(actorOf(org), paymentId), (row) => onTheWire(paymentView(row)))
  )

/** A payment as its route shows it. */
export const shown = (org: SeededOrg, paymentId: PaymentId) =>
  Effect.flatMap(Payments, (payments) => Effect.map(payments.get(actorOf(org), paymentId), onTheWire)).pipe(
    Effect.orDie
  )

/** An administrator's freeze or unfreeze of the org's credits (the admin routes' work). */
export const adminSets = (orgId: string, action: "freeze" | "unfreeze", reason?: string) =>
  Effect.gen(function*() {
    const db = yield* SuiteDatabase
    const { adminId } = yield* Effect.promise(() => seedAdmin(db))
    const credits = yield* CreditAdjustments
    return yield* credits[action]({ admin_id: adminId, email: "admin@example.com" }, orgId as OrgId, reason)
  })

/** The org's balance, whether it is frozen, and the ledger entries naming a payment. */
export const balance = (orgId: string) =>
  Effect.flatMap(SuiteDatabase, (db) => Effect.promise(() => balanceOf(db, orgId)))
export const frozen = (orgId: string) =>
  Effect.flatMap(SuiteDatabase, (db) => Effect.promise(() => frozenOf(db, orgId)))
export const entriesOf = (orgId: string, paymentId: string) =>
  Effect.flatMap(SuiteDatabase, (db) => Effect.promise(() => paymentEntries(db, orgId, paymentId)))
