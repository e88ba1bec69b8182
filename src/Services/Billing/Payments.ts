import { SqlClient } from "@effect/sql"
import { Clock, Effect, Option } from "effect"
import { createHash, randomUUID } from "node:crypto"
import { usdCentsToPaise } from "../../Domain/Billing.js"
import type { BillingProfile } from "../../Domain/BillingProfile.js"
import type { OrgActor } from "../../Domain/Current.js"
import type { FxRate } from "../../Domain/FxRate.js"
import { type OrgId, PaymentId } from "../../Domain/Ids.js"
import type { Payment } from "../../Domain/Payment.js"
import { InvalidInput, NotConfigured, NotFound } from "../../Errors/ApiErrors.js"
import { requireOwner } from "../Auth/Roles.js"
import { idempotent, KeyTaken } from "../Idempotency/Idempotent.js"
import { BillingConfig } from "./BillingConfig.js"
import { BillingRepo } from "./BillingRepo.js"
import { Checkouts } from "./Checkouts.js"
import { Fx } from "./Fx.js"
import { PaymentProvider } from "./PaymentProvider.js"
import { paymentView } from "./PaymentRecords.js"
import { PaymentStates } from "./PaymentStates.js"
import { PlanPrices } from "./PlanPrices.js"

/**
 * Starting a payment the customer confirms (a top-up, a plan fee) and learning how it
 * ended when the client comes back. The order of a start:
 *
 * 1. The idempotency key (`Idempotency/Idempotent.ts`, as on execute): a key already used
 *    by the org with the same request answers that payment again; with another request
 *    `idempotency_conflict`; a first request still talking to the provider
 *    `request_in_progress`.
 * 2. INR: the USD amount converted at the rate in force (`fx_unavailable` without one).
 * 3. One transaction locks the org's billing profile, runs the caller's check (the
 *    new-account cap, the founding offer's seat) and writes the payment as `creating`.
 * 4. The provider creates the payment under an idempotency key derived from ours, so a
 *    retry after a lost answer finds the same payment instead of making a second. If the
 *    provider fails, the `creating` row is removed: nothing changed (`payment_unavailable`).
 *
 * A payment left `creating` by a crash is taken up again by the next retry under its key
 * (or by the expiry sweep), with the same provider idempotency key.
 *
 * A top-up from the dashboard is paid on the provider's hosted checkout page (`checkout`):
 * the provider makes a checkout session instead of a payment for a client secret, and the
 * owner comes back to the dashboard's billing page, which asks `confirm` how it ended.
 */
export interface CheckoutReturn {
  /** The dashboard's address (`<public URL><DASHBOARD_PATH>`): the hosted page sends the owner back there. */
  readonly dashboardUrl: string
}

/** Where the hosted page sends the owner: the org's billing page, naming our payment (and the session). */
export const checkoutUrls = (dashboardUrl: string, orgId: string, paymentId: string) => {
  const page = `${dashboardUrl}/orgs/${orgId}/billing?payment=${paymentId}`
  return { successUrl: `${page}&session_id={CHECKOUT_SESSION_ID}`, cancelUrl: `${page}&checkout=canceled` }
}

export interface PaymentSpec {
  readonly purpose: "top_up" | "plan"
  /** Credits it buys (0 for a plan fee). */
  readonly credits: bigint
  readonly usdCents: bigint
  readonly currency: "usd" | "inr"
  readonly saveCard: boolean
  readonly plan: "pro" | "max" | null
  readonly offer: string | null
  /** Paid on the hosted checkout page rather than with a client secret. */
  readonly checkout: CheckoutReturn | null
}

export interface StartedPayment {
  readonly payment: Payment
  readonly clientSecret: string | null
  /** The hosted checkout page to send the owner to, while it is open. */
  readonly checkoutUrl: string | null
  readonly replayed: boolean
}

/** Runs inside the reservation transaction, after the org's billing profile is locked. */
export type Reservation<E> = (context: {
  readonly orgId: OrgId
  readonly paymentId: PaymentId
  readonly now: Date
  readonly profile: BillingProfile
}) => Effect.Effect<void, E, SqlClient.SqlClient>

const fingerprintOf = (spec: PaymentSpec) =>
  createHash("sha256")
    .update(
      JSON.stringify([
        spec.purpose,
        spec.credits.toString(),
        spec.usdCents.toString(),
        spec.currency,
        spec.saveCard,
        spec.plan,
        spec.offer,
        // Only checkout payments add a field, so the keys of earlier payments keep their fingerprints.
        ...(spec.checkout === null ? [] : ["checkout"])
      ])
    )
    .digest("hex")

/** A UUID (version 8, RFC 9562) made from a hash. */
const uuidFromHex = (hex: string) =>
  PaymentId.make(
    `${hex.slice(0, 8)}-${hex.slice(8, 12)}-8${hex.slice(13, 16)}-${
      ((parseInt(hex[16]!, 16) & 0x3) | 0x8).toString(16)
    }${hex.slice(17, 20)}-${hex.slice(20, 32)}`
  )

const KEY_PATTERN = /^[\x21-\x7e]{1,255}$/

export class Payments extends Effect.Service<Payments>()("Billing/Payments", {
  effect: Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const repo = yield* BillingRepo
    const provider = yield* PaymentProvider
    const states = yield* PaymentStates
    const checkouts = yield* Checkouts
    const fx = yield* Fx
    const config = yield* BillingConfig
    const prices = yield* PlanPrices

    const now = Effect.map(Clock.currentTimeMillis, (ms) => new Date(ms))

    const requireConfigured = provider.kind === "off"
      ? Effect.fail(
        new NotConfigured({
          message: "Billing is not configured: set STRIPE_SECRET_KEY, STRIPE_PUBLISHABLE_KEY and STRIPE_WEBHOOK_SECRET"
        })
      )
      : Effect.void

    /** The org's provider customer, made once (the provider's idempotency key is the org's). */
    const customerFor = (orgId: string) =>
      Effect.gen(function*() {
        const existing = yield* repo.profile(orgId)
        if (Option.isSome(existing) && existing.value.customer_id !== null) return existing.value.customer_id
        const id = yield* provider.createCustomer(orgId, `customer:${orgId}`)
        const at = yield* now
        yield* repo.ensureProfile(orgId, at).pipe(Effect.orDie)
        return yield* repo.keepCustomer(orgId, id, at)
      })

    /** Asks the provider for the payment (or the checkout session) of a `creating` row and records its id. */
    const createAtProvider = (row: Payment, checkout: CheckoutReturn | null) =>
      Effect.gen(function*() {
        const customerId = row.save_card || row.purpose === "plan" ? yield* customerFor(row.org_id) : null
        const request = {
          ourPaymentId: row.id,
          amountMinor: row.amount_minor,
          currency: row.currency,
          description: row.purpose === "plan"
            ? `Plan ${row.plan}${row.offer === null ? "" : ` (${row.offer})`}, one month`
            : `${row.credits} credits`,
          saveCard: row.save_card || row.purpose === "plan",
          customerId,
          idempotencyKey: row.provider_idempotency_key
        }
        let clientSecret: string | null = null
        let checkoutUrl: string | null = null
        if (row.checkout) {
          // A retry of a request cut off by a crash may come without the return address; the
          // sweep removes such a row instead (its customer never saw the page).
          if (checkout === null) return yield* Effect.dieMessage(`Payment ${row.id} needs its return address`)
          // A plan is a subscription to its price, started on the hosted page.
          const subscription = row.purpose === "plan" && row.plan !== null
            ? { priceId: yield* prices.priceFor(row.plan, row.offer !== null), orgId: row.org_id }
            : null
          const session = yield* provider.createCheckout({
            ...request,
            ...checkoutUrls(checkout.dashboardUrl, row.org_id, row.id),
            subscription
          })
          yield* repo.setCheckoutSession(row.id, session.id, yield* now).pipe(Effect.orDie)
          checkoutUrl = session.url
        } else {
          const created = yield* provider.createPayment(request)
          yield* repo.setProviderId(row.id, created.id, yield* now).pipe(Effect.orDie)
          clientSecret = created.clientSecret
        }
        const after = yield* repo.findPayment(row.org_id, row.id)
        return { payment: Option.getOrElse(after, () => row), clientSecret, checkoutUrl }
      })

    /** What a replay answers for a payment that is still open: its client secret, or its hosted page. */
    const openAnswer = (row: Payment) =>
      Effect.gen(function*() {
        const open = row.status === "pending" || row.status === "failed"
        if (open && row.checkout && row.checkout_session_id !== null) {
          return { clientSecret: null, checkoutUrl: (yield* provider.retrieveCheckout(row.checkout_session_id)).url }
        }
        const clientSecret = open && !row.checkout && row.provider_payment_id !== null
          ? (yield* provider.retrievePayment(row.provider_payment_id)).clientSecret
          : null
        return { clientSecret, checkoutUrl: null }
      })

    /**
     * The answer a key used before replays: the same payment; none while its first request
     * still talks to the provider; a request cut off long ago is finished with the same
     * provider idempotency key.
     */
    const answerForKey = (row: Payment, checkout: CheckoutReturn | null) =>
      Effect.gen(function*() {
        if (row.status === "creating") {
          const age = (yield* Clock.currentTimeMillis) - row.created_at.getTime()
          if (age < config.providerTimeoutMs + 5_000) return Option.none<StartedPayment>()
          return Option.some<StartedPayment>({ ...(yield* createAtProvider(row, checkout)), replayed: true })
        }
        return Option.some<StartedPayment>({ payment: row, ...(yield* openAnswer(row)), replayed: true })
      })

    /** Writes the payment (taking the key, when there is one) and has the provider create it. */
    const create = <E>(
      actor: OrgActor,
      spec: PaymentSpec,
      idempotencyKey: string | null,
      fingerprint: string,
      reserve: Reservation<E>
    ) =>
      Effect.gen(function*() {
        let amountMinor = spec.usdCents
        let rate: FxRate | null = null
        if (spec.currency === "inr") {
          rate = yield* fx.rateForCharge
          amountMinor = usdCentsToPaise(spec.usdCents, rate.inr_per_usd)
        }
        // With a key, the payment's id and the provider's key follow from it, so a retry after a
        // lost answer sends the provider the very same request and gets the same payment.
        const keyHash = idempotencyKey === null
          ? null
          : createHash("sha256").update(`${actor.org_id}\n${idempotencyKey}\n${fingerprint}`).digest("hex")
        const id = keyHash === null ? PaymentId.make(randomUUID()) : uuidFromHex(keyHash)
        const at = yield* now
        const providerKey = keyHash === null ? `payment:${id}` : `payment:${actor.org_id}:${keyHash}`
        const inserted = yield* sql.withTransaction(Effect.gen(function*() {
          const profile = yield* repo.lockProfile(actor.org_id, at)
          yield* reserve({ orgId: actor.org_id, paymentId: id, now: at, profile })
          return yield* repo.insertPayment({
            id,
            org_id: actor.org_id,
            purpose: spec.purpose,
            provider: provider.kind === "stripe" ? "stripe" : "sandbox",
            provider_idempotency_key: providerKey,
            currency: spec.currency,
            status: "creating",
            amount_minor: amountMinor,
            usd_cents: spec.usdCents,
            credits: spec.credits,
            fx_rate: rate?.inr_per_usd ?? null,
            fx_rate_date: rate?.rate_date ?? null,
            plan: spec.plan,
            offer: spec.offer,
            save_card: spec.saveCard,
            checkout: spec.checkout !== null,
            idempotency_key: idempotencyKey,
            fingerprint,
            created_by: actor.user_id,
            created_at: at,
            updated_at: at
          })
        })).pipe(Effect.catchTag("SqlError", Effect.die))
        // A concurrent request took the same key first.
        if (Option.isNone(inserted)) return yield* new KeyTaken()
        const created = yield* createAtProvider(inserted.value, spec.checkout).pipe(
          // Nothing changes when the provider failed: the row (and any seat it reserved) goes.
          Effect.tapError(() => repo.deletePayment(id).pipe(Effect.orDie))
        )
        return { ...created, replayed: false } satisfies StartedPayment
      })

    const start = <E>(
      actor: OrgActor,
      spec: PaymentSpec,
      idempotencyKey: string | undefined,
      reserve: Reservation<E>
    ) =>
      Effect.gen(function*() {
        yield* requireConfigured
        if (idempotencyKey !== undefined && !KEY_PATTERN.test(idempotencyKey)) {
          return yield* new InvalidInput({ message: "idempotency_key must be 1 to 255 printable ASCII characters" })
        }
        const fingerprint = fingerprintOf(spec)
        return yield* idempotent({
          key: idempotencyKey ?? null,
          fingerprint,
          noun: "payment",
          lookup: (key) =>
            Effect.map(
              repo.findByKey(actor.org_id, key),
              // A payment taken under a key always has its request's fingerprint.
              Option.map((row) => ({ fingerprint: row.fingerprint ?? "", answer: answerForKey(row, spec.checkout) }))
            ),
          run: (key) => create(actor, spec, key, fingerprint, reserve)
        })
      })

    /** The client came back: ask the provider how the payment ended and apply it (once). */
    const confirm = (actor: OrgActor, paymentId: PaymentId) =>
      Effect.gen(function*() {
        yield* requireConfigured
        const found = yield* repo.findPayment(actor.org_id, paymentId)
        if (Option.isNone(found)) return yield* new NotFound({ message: "No such payment" })
        const row = found.value
        if (row.checkout) {
          // The session says how it ended, including a payment it made that we have not heard of.
          if (row.checkout_session_id === null) return row
          return Option.getOrElse(yield* checkouts.sync(row.checkout_session_id), () => row)
        }
        if (row.provider_payment_id === null) return row
        const payment = yield* provider.retrievePayment(row.provider_payment_id)
        const after = yield* states.apply(payment)
        return Option.getOrElse(after, () => row)
      })

    /**
     * Ends a payment the customer has not paid: the owner came back from the hosted page
     * without paying. One paid meanwhile is credited instead; an ended one is left as it is.
     */
    const cancel = (actor: OrgActor, paymentId: PaymentId) =>
      Effect.gen(function*() {
        yield* requireConfigured
        yield* requireOwner(actor)
        const found = yield* repo.findPayment(actor.org_id, paymentId)
        if (Option.isNone(found)) return yield* new NotFound({ message: "No such payment" })
        const row = found.value
        if (row.status !== "pending" && row.status !== "failed") return row
        if (row.checkout) return Option.getOrElse(yield* checkouts.end(row), () => row)
        if (row.provider_payment_id === null) return row
        const after = yield* states.apply(yield* provider.cancelPayment(row.provider_payment_id))
        return Option.getOrElse(after, () => row)
      })

    const get = (actor: OrgActor, paymentId: PaymentId) =>
      Effect.gen(function*() {
        yield* requireConfigured
        const found = yield* repo.findPayment(actor.org_id, paymentId)
        if (Option.isNone(found)) return yield* new NotFound({ message: "No such payment" })
        return paymentView(found.value)
      })

    const list = (actor: OrgActor, limit: number, startingAfter: Option.Option<PaymentId> | undefined) =>
      Effect.gen(function*() {
        yield* requireConfigured
        let before: Payment | null = null
        if (startingAfter !== undefined) {
          // None: the cursor's text names no payment at all (not an id).
          const cursor = Option.isSome(startingAfter)
            ? yield* repo.findPayment(actor.org_id, startingAfter.value)
            : Option.none()
          if (Option.isNone(cursor)) {
            return yield* new InvalidInput({ message: "starting_after is not a payment of this org" })
          }
          before = cursor.value
        }
        const rows = yield* repo.listPayments(actor.org_id, limit, before)
        return { payments: rows.slice(0, limit).map(paymentView), has_more: rows.length > limit }
      })

    return { start, confirm, cancel, get, list, requireConfigured, customerFor } as const
  }),
  dependencies: [
    BillingRepo.Default,
    PaymentStates.Default,
    Checkouts.Default,
    Fx.Default,
    BillingConfig.Default,
    PlanPrices.Default
  ]
}) {}
