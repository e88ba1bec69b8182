import { disputeHoldsMoney, minorToDecimal } from "../../Domain/Billing.js"
import { amountOf } from "../../Domain/Money.js"
import type { PaymentRow } from "./BillingRepo.js"

/** The wire form of a payment (the schema is `Payment` in Http/Groups/BillingGroup.ts). */
export const paymentStatusOf = (row: PaymentRow) => {
  if (row.status === "creating") return "pending" as const
  if (row.status !== "succeeded") return row.status
  // A won dispute gave the money back: the payment reads as its refunds say.
  if (disputeHoldsMoney(row.dispute_status)) return "disputed" as const
  const refunded = row.refunded_minor
  if (refunded >= row.amount_minor) return "refunded" as const
  if (refunded > 0n) return "partially_refunded" as const
  return "succeeded" as const
}

const dateOf = (
  value: string | Date
) => (typeof value === "string" ? value.slice(0, 10) : value.toISOString().slice(0, 10))

export const paymentRecord = (row: PaymentRow) => ({
  id: row.id,
  purpose: row.purpose,
  status: paymentStatusOf(row),
  currency: row.currency,
  amount: minorToDecimal(row.amount_minor),
  amount_usd: minorToDecimal(row.usd_cents),
  credits: amountOf(row.credits),
  fx: row.fx_rate === null || row.fx_rate_date === null
    ? null
    : { source: "ECB" as const, inr_per_usd: row.fx_rate, rate_date: dateOf(row.fx_rate_date) },
  plan: row.plan,
  offer: row.offer,
  save_card: row.save_card,
  card: row.card_last4 === null ? null : { brand: row.card_brand ?? "card", last4: row.card_last4 },
  failure_message: row.failure_message,
  refunded: minorToDecimal(row.refunded_minor),
  disputed: minorToDecimal(row.disputed_minor),
  credits_taken_back: amountOf(row.reversed_credits),
  receipt_url: row.receipt_url,
  provider: row.provider,
  provider_payment_id: row.provider_payment_id,
  created_at: row.created_at.toISOString(),
  credited_at: row.credited_at === null ? null : row.credited_at.toISOString()
})

export type PaymentRecord = ReturnType<typeof paymentRecord>
