import { SqlClient } from "@effect/sql"
import { Clock, Effect, Option } from "effect"
import {
  creditsTakenBack,
  disputeHoldsMoney,
  type DisputeStatus,
  nextDisputeStatus,
  type PaymentFacts
} from "../../Domain/Billing.js"
import type { Payment } from "../../Domain/Payment.js"
import { Ledger } from "../Ledger/Ledger.js"
import { BillingRepo } from "./BillingRepo.js"

/**
 * Money a payment gives back (refunds and disputes), applied whatever the order and
 * however often the provider's events arrive. A payment accumulates what is known of it:
 * paid or not (`credited_at`), refunded so far, the disputed amount and where the dispute
 * stands (only forward: open, then won or lost). The credits it leaves the org are always
 * derived from that state (`creditsTakenBack` in Domain/Billing.ts); `reversed_credits`
 * is what the ledger has taken back so far, so each change writes just the difference as
 * one entry: a take-back (which may drive the balance negative) or, when a dispute is won,
 * the credits given back. Before the payment is paid nothing is taken; its success credits
 * the payment and takes back at once, in one transaction, what was already returned.
 *
 * Freezing: a dispute that opens or is lost freezes the org's credits. One that is won
 * lifts the freeze when nothing else holds it (`BillingRepo.disputeFreezeLiftable`); else
 * an administrator unfreezes. An administrator may unfreeze at any time; only a dispute
 * moving on (opening, being lost) freezes again, so a late or repeated event does not.
 *
 * Lock order, as in the rest of billing: the payment row, the org's billing profile
 * (which serializes the org's freeze decisions), then the ledger's balance row.
 */
export type ReturnChange =
  /** Stripe's `amount_refunded` of the charge: cumulative. */
  | { readonly kind: "refund"; readonly refundedMinor: bigint }
  | { readonly kind: "dispute"; readonly amountMinor: bigint; readonly status: DisputeStatus }

const max = (a: bigint, b: bigint) => (a > b ? a : b)

const factsOf = (row: Payment): PaymentFacts => ({
  amountMinor: row.amount_minor,
  credits: row.credits,
  paid: row.credited_at !== null,
  refundedMinor: row.refunded_minor,
  disputedMinor: row.disputed_minor,
  disputeStatus: row.dispute_status
})

export class PaymentReturns extends Effect.Service<PaymentReturns>()("Billing/PaymentReturns", {
  effect: Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const repo = yield* BillingRepo
    const ledger = yield* Ledger

    const named = (row: Payment) => `payment ${row.id} (${row.provider_payment_id ?? "no provider id"})`

    /** Moves what the ledger has taken back for the payment from `reversed` to `target`: one entry. */
    const takeBackTo = (row: Payment, reversed: bigint, target: bigint, cause: "refund" | "dispute") =>
      Effect.gen(function*() {
        if (target > reversed) {
          const what = cause === "refund" ? "Refund" : "Chargeback"
          yield* ledger.takeBack(row.org_id, target - reversed, `${what} of ${named(row)}`)
        } else if (target < reversed) {
          // Only a won dispute gives money back to us.
          yield* ledger.credit(row.org_id, reversed - target, "adjustment", `Dispute won on ${named(row)}`)
        }
        return target
      }).pipe(Effect.catchTag("invalid_amount", Effect.die))

    /**
     * Brings the ledger in line with the payment's state (under the caller's lock on the
     * row). A payment just paid may have been refunded and disputed already: each share is
     * its own entry, refunds first.
     */
    const settle = (row: Payment, cause: "paid" | "refund" | "dispute", now: Date) =>
      Effect.gen(function*() {
        const facts = factsOf(row)
        let reversed = row.reversed_credits
        if (cause === "paid") {
          reversed = yield* takeBackTo(row, reversed, max(reversed, creditsTakenBack(facts, false)), "refund")
        }
        reversed = yield* takeBackTo(row, reversed, creditsTakenBack(facts), cause === "refund" ? "refund" : "dispute")
        if (reversed !== row.reversed_credits) {
          yield* repo.updatePayment(row.id, { reversed_credits: reversed.toString(), updated_at: now })
        }
      })

    /** The org's freeze after its dispute moved to `status`. */
    const disputeMoved = (orgId: Payment["org_id"], status: DisputeStatus) =>
      Effect.gen(function*() {
        if (disputeHoldsMoney(status)) return yield* ledger.setFrozen(orgId, true)
        if (yield* repo.disputeFreezeLiftable(orgId)) yield* ledger.setFrozen(orgId, false)
      })

    /** A refund or dispute event of the provider's payment; answers our payment after it (none when not ours). */
    const record = (providerPaymentId: string, change: ReturnChange) =>
      sql.withTransaction(Effect.gen(function*() {
        const now = new Date(yield* Clock.currentTimeMillis)
        const locked = yield* repo.lockPayment(null, providerPaymentId)
        if (Option.isNone(locked)) return Option.none<Payment>()
        const row = locked.value
        yield* repo.lockProfile(row.org_id, now)
        // Amounts only grow and a dispute only moves forward: events may come twice or out of order.
        const next: Payment = change.kind === "refund"
          ? { ...row, refunded_minor: max(row.refunded_minor, change.refundedMinor) }
          : {
            ...row,
            disputed_minor: max(row.disputed_minor, change.amountMinor),
            dispute_status: nextDisputeStatus(row.dispute_status, change.status)
          }
        yield* repo.updatePayment(row.id, {
          refunded_minor: next.refunded_minor.toString(),
          disputed_minor: next.disputed_minor.toString(),
          dispute_status: next.dispute_status,
          updated_at: now
        })
        yield* settle(next, change.kind, now)
        if (next.dispute_status !== null && next.dispute_status !== row.dispute_status) {
          yield* disputeMoved(row.org_id, next.dispute_status)
        }
        return yield* repo.lockPayment(row.id, providerPaymentId)
      })).pipe(Effect.orDie)

    return { settle, record } as const
  }),
  dependencies: [BillingRepo.Default]
}) {}
