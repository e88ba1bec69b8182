import { SqlClient } from "@effect/sql"
import { Clock, Effect, Option, Queue } from "effect"
import { randomUUID } from "node:crypto"
import { CREDITS_PER_CENT, topUpLimits } from "../../Domain/Billing.js"
import type { BillingProfile } from "../../Domain/BillingProfile.js"
import type { OrgActor } from "../../Domain/Current.js"
import { type OrgId, PaymentId } from "../../Domain/Ids.js"
import { amountOf } from "../../Domain/Money.js"
import type { Payment } from "../../Domain/Payment.js"
import { InvalidAmount, InvalidInput, NoSavedCard } from "../../Errors/ApiErrors.js"
import { requireOwner } from "../Auth/Roles.js"
import { Ledger } from "../Ledger/Ledger.js"
import { monthOf } from "../Ledger/Time.js"
import { BillingConfig } from "./BillingConfig.js"
import { BillingRepo, offSessionPayment } from "./BillingRepo.js"
import { PaymentProvider } from "./PaymentProvider.js"
import { Payments } from "./Payments.js"
import { PaymentStates } from "./PaymentStates.js"
import { TopUps } from "./TopUps.js"

/**
 * Auto-reload: when an org's balance is under its threshold, one off-session charge of the
 * set amount on the saved card (USD only), never two at once for one org and never past
 * the monthly limit or the new-account cap.
 *
 * It stays off the purchase path: nothing is added to holds or settlements. A worker
 * (every replica) looks for orgs with auto-reload on and a balance under the threshold,
 * woken at once by `AutoReloadSignal` (after gateway settlements and settings changes) and
 * otherwise every BILLING_WORKER_INTERVAL_MS. It takes each org's billing profile with
 * `FOR UPDATE SKIP LOCKED` and writes the charge's payment row in that transaction; a
 * unique index allows one auto-reload payment in flight per org, so a second concurrent
 * charge cannot even be written. The provider is called after the commit, under an
 * idempotency key naming our payment, so a retry after a crash never charges twice.
 */
export class AutoReloadSignal extends Effect.Service<AutoReloadSignal>()("Billing/AutoReloadSignal", {
  effect: Effect.map(Queue.sliding<void>(1), (queue) => ({
    /** Asks the worker to look now; many wakes before it looks count as one. */
    wake: Effect.asVoid(Queue.offer(queue, undefined)),
    next: Queue.take(queue)
  }))
}) {}

export interface AutoReloadSettings {
  readonly enabled: boolean
  readonly threshold_credits?: unknown
  readonly amount_credits?: unknown
  readonly monthly_limit_credits?: unknown
}

const wholeCredits = (value: unknown, name: string) => {
  const text = typeof value === "number" && Number.isSafeInteger(value)
    ? String(value)
    : typeof value === "string"
    ? value.trim()
    : ""
  if (!/^-?\d+$/.test(text)) return new InvalidAmount({ message: `${name} must be a whole number of credits` })
  const credits = BigInt(text)
  return credits < 0n ? new InvalidAmount({ message: `${name} cannot be negative` }) : credits
}

export const autoReloadRecord = (profile: Option.Option<BillingProfile>, usedThisMonth: bigint) => {
  const p = Option.getOrNull(profile)
  const credits = (value: bigint | null | undefined) => (value === null || value === undefined ? null : amountOf(value))
  return {
    enabled: p?.auto_reload_enabled ?? false,
    threshold: credits(p?.auto_reload_threshold_credits),
    amount: credits(p?.auto_reload_amount_credits),
    monthly_limit: credits(p?.auto_reload_monthly_limit_credits),
    used_this_month: amountOf(usedThisMonth),
    failures_in_a_row: p?.auto_reload_failures ?? 0,
    disabled_reason: p?.auto_reload_disabled_reason ?? null,
    currency: "usd" as const,
    note:
      "Auto-reload charges the saved card in USD only: off-session charges on India-issued cards fall under RBI e-mandate rules (registration, pre-debit notice), so INR top-ups are one-time payments."
  }
}

export class AutoReload extends Effect.Service<AutoReload>()("Billing/AutoReload", {
  effect: Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const repo = yield* BillingRepo
    const ledger = yield* Ledger
    const provider = yield* PaymentProvider
    const states = yield* PaymentStates
    const payments = yield* Payments
    const topUps = yield* TopUps
    const signal = yield* AutoReloadSignal
    const config = yield* BillingConfig

    const now = Effect.map(Clock.currentTimeMillis, (ms) => new Date(ms))
    const monthStart = (at: Date) => new Date(`${monthOf(at.getTime())}T00:00:00.000Z`)

    const settings = (actor: OrgActor) =>
      Effect.gen(function*() {
        yield* payments.requireConfigured
        const at = yield* now
        const profile = yield* repo.profile(actor.org_id)
        return autoReloadRecord(profile, yield* repo.autoReloadedSince(actor.org_id, monthStart(at)))
      })

    const update = (actor: OrgActor, input: AutoReloadSettings) =>
      Effect.gen(function*() {
        yield* payments.requireConfigured
        yield* requireOwner(actor)
        const at = yield* now
        if (!input.enabled) {
          yield* repo.ensureProfile(actor.org_id, at).pipe(Effect.orDie)
          yield* repo.updateProfile(actor.org_id, { auto_reload_enabled: false, updated_at: at }).pipe(Effect.orDie)
          return yield* settings(actor)
        }
        const threshold = wholeCredits(input.threshold_credits, "threshold_credits")
        if (threshold instanceof InvalidAmount) return yield* threshold
        const amount = wholeCredits(input.amount_credits, "amount_credits")
        if (amount instanceof InvalidAmount) return yield* amount
        if (amount < topUpLimits.min_credits || amount > topUpLimits.max_credits || amount % CREDITS_PER_CENT !== 0n) {
          return yield* new InvalidAmount({
            message:
              `amount_credits must be a whole number of cents (a multiple of ${CREDITS_PER_CENT}) from ${topUpLimits.min_credits} to ${topUpLimits.max_credits}`
          })
        }
        let limit: bigint | null = null
        if (input.monthly_limit_credits !== undefined && input.monthly_limit_credits !== null) {
          const parsed = wholeCredits(input.monthly_limit_credits, "monthly_limit_credits")
          if (parsed instanceof InvalidAmount) return yield* parsed
          if (parsed < amount) {
            return yield* new InvalidInput({ message: "monthly_limit_credits must be at least amount_credits" })
          }
          limit = parsed
        }
        yield* sql.withTransaction(Effect.gen(function*() {
          const profile = yield* repo.lockProfile(actor.org_id, at)
          if (profile.card_payment_method_id === null || profile.customer_id === null) {
            return yield* new NoSavedCard({
              message:
                "Auto-reload needs a saved card: save one, or keep the card when buying credits in US dollars, then switch it on"
            })
          }
          yield* repo.updateProfile(actor.org_id, {
            auto_reload_enabled: true,
            auto_reload_threshold_credits: threshold.toString(),
            auto_reload_amount_credits: amount.toString(),
            auto_reload_monthly_limit_credits: limit === null ? null : limit.toString(),
            auto_reload_failures: 0,
            auto_reload_next_attempt_at: null,
            auto_reload_disabled_reason: null,
            updated_at: at
          })
        })).pipe(Effect.catchTag("SqlError", Effect.die))
        // The balance may already be under the threshold.
        yield* signal.wake
        return yield* settings(actor)
      })

    /** Orgs that may need a charge now (a cheap read; each is checked again under its lock). */
    const candidates = repo.autoReloadCandidates

    /** Writes one org's charge under its profile lock, if it still needs one; none otherwise. */
    interface Claimed {
      readonly row: Payment
      readonly customerId: string
      readonly paymentMethodId: string
    }

    const claim = (orgId: OrgId, at: Date) =>
      sql.withTransaction(Effect.gen(function*() {
        const locked = yield* repo.lockAutoReloadProfile(orgId)
        const profile = Option.getOrUndefined(locked)
        if (profile === undefined || profile.card_payment_method_id === null || profile.customer_id === null) {
          return Option.none<Claimed>()
        }
        if (profile.auto_reload_next_attempt_at !== null && profile.auto_reload_next_attempt_at > at) {
          return Option.none<Claimed>()
        }
        const credits = yield* ledger.orgCredits(orgId)
        const threshold = profile.auto_reload_threshold_credits ?? 0n
        if (credits.frozen || credits.balance >= threshold) return Option.none<Claimed>()
        const amount = profile.auto_reload_amount_credits ?? 0n
        const limit = profile.auto_reload_monthly_limit_credits
        const retryAt = new Date(at.getTime() + config.autoReloadRetryMs)
        if (limit !== null && (yield* repo.autoReloadedSince(orgId, monthStart(at))) + amount > limit) {
          yield* Effect.logInfo(`Auto-reload of org ${orgId} skipped: the monthly limit is reached`)
          yield* repo.updateProfile(orgId, { auto_reload_next_attempt_at: retryAt, updated_at: at })
          return Option.none<Claimed>()
        }
        const capped = yield* Effect.either(topUps.checkCap(orgId, amount))
        if (capped._tag === "Left") {
          yield* Effect.logInfo(`Auto-reload of org ${orgId} skipped: ${capped.left.message}`)
          yield* repo.updateProfile(orgId, { auto_reload_next_attempt_at: retryAt, updated_at: at })
          return Option.none<Claimed>()
        }
        const id = PaymentId.make(randomUUID())
        const inserted = yield* repo.insertPayment(offSessionPayment({
          id,
          orgId,
          purpose: "auto_reload",
          provider: provider.kind === "stripe" ? "stripe" : "sandbox",
          providerIdempotencyKey: `payment:${id}`,
          cents: amount / CREDITS_PER_CENT,
          credits: amount,
          plan: null,
          offer: null,
          at
        }))
        // A crash before the charge's outcome is recorded must not mean a charge every round.
        if (Option.isSome(inserted)) {
          yield* repo.updateProfile(orgId, { auto_reload_next_attempt_at: retryAt, updated_at: at })
        }
        return Option.map(
          inserted,
          (row) => ({ row, customerId: profile.customer_id!, paymentMethodId: profile.card_payment_method_id! })
        )
      })).pipe(Effect.orDie)

    /** Charges the saved card for a claimed payment and applies the outcome. */
    const charge = (row: Payment, customerId: string, paymentMethodId: string) =>
      provider.chargeOffSession({
        ourPaymentId: row.id,
        amountMinor: row.amount_minor,
        currency: "usd",
        description: `Auto-reload: ${row.credits} credits`,
        customerId,
        paymentMethodId,
        idempotencyKey: row.provider_idempotency_key
      }).pipe(
        Effect.flatMap(states.apply),
        Effect.catchAll((error) => Effect.logWarning(`Auto-reload charge ${row.id} left for a retry: ${error.message}`))
      )

    /** One round: every org under its threshold gets at most one charge. */
    const runOnce = Effect.gen(function*() {
      if (provider.kind === "off") return 0
      const at = yield* now
      let charged = 0
      for (const orgId of yield* candidates(at)) {
        const claimed = yield* claim(orgId, at)
        if (Option.isNone(claimed)) continue
        yield* charge(claimed.value.row, claimed.value.customerId, claimed.value.paymentMethodId)
        charged++
      }
      return charged
    })

    /** Takes up a charge a crash left `creating`: the same idempotency key answers the first charge. */
    const resume = (row: Payment) =>
      Effect.gen(function*() {
        const profile = yield* repo.profile(row.org_id)
        const p = Option.getOrNull(profile)
        if (p === null || p.customer_id === null || p.card_payment_method_id === null) return
        yield* charge(row, p.customer_id, p.card_payment_method_id)
      })

    return { settings, update, runOnce, resume } as const
  }),
  dependencies: [BillingRepo.Default, PaymentStates.Default, Payments.Default, TopUps.Default, BillingConfig.Default]
}) {}
