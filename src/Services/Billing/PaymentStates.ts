import { SqlClient } from "@effect/sql"
import { Clock, Effect, Option } from "effect"
import type { PaymentId } from "../../Domain/Ids.js"
import type { Payment } from "../../Domain/Payment.js"
import { Ledger } from "../Ledger/Ledger.js"
import { BillingMail } from "./BillingMail.js"
import { BillingRepo } from "./BillingRepo.js"
import { PaymentProvider, type ProviderPayment } from "./PaymentProvider.js"
import { PaymentReturns } from "./PaymentReturns.js"

/**
 * What the provider says about a payment, applied to ours exactly once. Every path that
 * learns a payment's state (the webhook, the client coming back, the auto-reload worker,
 * the expiry sweep) calls `apply`, which locks our payment row and moves it only forward:
 * the first caller to see `succeeded` credits the ledger (one `top_up` entry naming the
 * payment), takes back at once what was refunded or disputed before (PaymentReturns.ts),
 * saves the card, takes a plan's founding seat and queues the receipts, all in one transaction;
 * every later caller finds it credited and does nothing. A payment that failed again keeps
 * the latest reason.
 */
export const AUTO_RELOAD_MAX_FAILURES = 3

export class PaymentStates extends Effect.Service<PaymentStates>()("Billing/PaymentStates", {
  effect: Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const repo = yield* BillingRepo
    const ledger = yield* Ledger
    const mail = yield* BillingMail
    const provider = yield* PaymentProvider
    const returns = yield* PaymentReturns
    const sandbox = provider.kind === "sandbox"

    const succeed = (row: Payment, payment: ProviderPayment, now: Date) =>
      Effect.gen(function*() {
        // The profile's lock first: billing's lock order is payment, profile, balance.
        yield* repo.lockProfile(row.org_id, now)
        const done: Payment = {
          ...row,
          status: "succeeded",
          provider_payment_id: payment.id,
          receipt_url: payment.receiptUrl,
          card_brand: payment.card?.brand ?? row.card_brand,
          card_last4: payment.card?.last4 ?? row.card_last4,
          failure_message: null,
          credited_at: now,
          updated_at: now
        }
        yield* repo.updatePayment(row.id, {
          status: done.status,
          provider_payment_id: done.provider_payment_id,
          receipt_url: done.receipt_url,
          card_brand: done.card_brand,
          card_last4: done.card_last4,
          failure_message: null,
          credited_at: now,
          updated_at: now
        })
        const credits = row.credits
        if (credits > 0n) {
          // A top-up ends the trial's hourly limit and re-arms balance.low (the ledger's rules).
          yield* ledger.credit(row.org_id, credits, "top_up", `Payment ${row.id} (${payment.id})`)
        }
        // Refunds and disputes may have come first (Stripe does not order its events).
        yield* returns.settle(done, "paid", now)
        // Plan payments always keep the card: the subscription renews on it.
        const keepCard = (row.save_card || row.purpose === "plan") && payment.paymentMethodId !== null &&
          payment.customerId !== null
        if (keepCard) {
          yield* repo.updateProfile(row.org_id, {
            customer_id: payment.customerId,
            card_payment_method_id: payment.paymentMethodId,
            card_brand: payment.card?.brand ?? null,
            card_last4: payment.card?.last4 ?? null,
            card_exp_month: payment.card?.expMonth ?? null,
            card_exp_year: payment.card?.expYear ?? null,
            updated_at: now
          })
        }
        if (row.purpose === "auto_reload") {
          yield* repo.updateProfile(row.org_id, {
            auto_reload_failures: 0,
            auto_reload_next_attempt_at: null,
            updated_at: now
          })
        }
        // The plan itself follows its subscription (PlanSubscriptions.ts); its first fee takes the founding seat.
        if (row.purpose === "plan" && row.offer !== null) yield* repo.takeOfferSeat(row.org_id, row.id, now)
        yield* mail.receipt(done, sandbox)
      })

    const fail = (row: Payment, payment: ProviderPayment, now: Date) =>
      Effect.gen(function*() {
        const failed: Payment = {
          ...row,
          status: "failed",
          provider_payment_id: payment.id,
          failure_message: payment.failureMessage ?? "The payment was not completed",
          updated_at: now
        }
        yield* repo.updatePayment(row.id, {
          status: "failed",
          provider_payment_id: payment.id,
          failure_message: failed.failure_message,
          updated_at: now
        })
        if (row.purpose !== "auto_reload") return
        // An off-session charge that fails (or needs its holder) counts toward switching auto-reload off.
        const profile = yield* repo.lockProfile(row.org_id, now)
        const failures = profile.auto_reload_failures + 1
        const disabled = failures >= AUTO_RELOAD_MAX_FAILURES
        yield* repo.updateProfile(row.org_id, {
          auto_reload_failures: failures,
          auto_reload_enabled: profile.auto_reload_enabled && !disabled,
          auto_reload_disabled_reason: disabled
            ? `Switched off after ${failures} failed charges in a row (last: ${failed.failure_message})`
            : profile.auto_reload_disabled_reason,
          updated_at: now
        })
        yield* mail.autoReloadFailed(failed, failures, disabled, payment.needsAuthentication === true)
      })

    const cancel = (row: Payment, payment: ProviderPayment, now: Date) =>
      Effect.gen(function*() {
        yield* repo.updatePayment(row.id, { status: "canceled", provider_payment_id: payment.id, updated_at: now })
        yield* repo.releaseOfferSeat(row.id)
      })

    /**
     * Applies the provider's state of a payment to ours, once; answers our payment after
     * it (none when the payment is not one of ours).
     */
    const apply = (payment: ProviderPayment) =>
      sql.withTransaction(Effect.gen(function*() {
        const now = new Date(yield* Clock.currentTimeMillis)
        const locked = yield* repo.lockPayment(payment.ourPaymentId, payment.id)
        if (Option.isNone(locked)) return Option.none<Payment>()
        const row = locked.value
        if (row.provider_payment_id !== null && row.provider_payment_id !== payment.id) {
          // Metadata naming a payment the provider knows under another id: not this one.
          return Option.some(row)
        }
        const open = row.status === "creating" || row.status === "pending" || row.status === "failed"
        if (payment.status === "succeeded") {
          if (row.credited_at === null && row.status !== "canceled") yield* succeed(row, payment, now)
        } else if (payment.status === "canceled") {
          if (open) yield* cancel(row, payment, now)
        } else if (
          (row.status === "creating" || row.status === "pending") &&
          (payment.failureMessage !== null ||
            (row.purpose !== "top_up" && row.purpose !== "plan" && payment.status === "requires_action"))
        ) {
          yield* fail(row, payment, now)
        } else if (
          row.status === "failed" && payment.failureMessage !== null && payment.failureMessage !== row.failure_message
        ) {
          // Another attempt failed: its reason is the one to show (counted once toward auto-reload's limit).
          yield* repo.updatePayment(row.id, { failure_message: payment.failureMessage, updated_at: now })
        } else if (row.status === "creating") {
          yield* repo.setProviderId(row.id, payment.id, now)
        }
        return yield* repo.lockPayment(row.id, payment.id)
      })).pipe(Effect.orDie)

    /**
     * A checkout session ended unpaid (expired, or the owner came back from it cancelled):
     * the payment ends `canceled` unless something paid it, giving back its cap allowance.
     */
    const endCheckout = (ourPaymentId: PaymentId, sessionId: string) =>
      sql.withTransaction(Effect.gen(function*() {
        const now = new Date(yield* Clock.currentTimeMillis)
        const locked = yield* repo.lockPaymentById(ourPaymentId)
        if (Option.isNone(locked)) return Option.none<Payment>()
        const row = locked.value
        if (!row.checkout || (row.checkout_session_id !== null && row.checkout_session_id !== sessionId)) {
          return Option.some(row)
        }
        const open = row.status === "creating" || row.status === "pending" || row.status === "failed"
        if (open && row.credited_at === null) {
          yield* repo.updatePayment(row.id, { status: "canceled", checkout_session_id: sessionId, updated_at: now })
          yield* repo.releaseOfferSeat(row.id)
        }
        return yield* repo.lockPaymentById(row.id)
      })).pipe(Effect.orDie)

    return { apply, endCheckout } as const
  }),
  dependencies: [BillingRepo.Default, BillingMail.Default, PaymentReturns.Default]
}) {}
