import { Struct } from "effect"
import { disputeHoldsMoney } from "../../Domain/Billing.js"
import { type Payment, type PaymentView, paymentWireColumns } from "../../Domain/Payment.js"

/** The wire's status of a payment: its state, with what was given back since. */
export const paymentStatusOf = (row: Payment) => {
  if (row.status === "creating") return "pending" as const
  if (row.status !== "succeeded") return row.status
  // A won dispute gave the money back: the payment reads as its refunds say.
  if (disputeHoldsMoney(row.dispute_status)) return "disputed" as const
  const refunded = row.refunded_minor
  if (refunded >= row.amount_minor) return "refunded" as const
  if (refunded > 0n) return "partially_refunded" as const
  return "succeeded" as const
}

/** A payment as the wire shows it (`PaymentJson`): the row's own fields and those computed from several. */
export const paymentView = (row: Payment): PaymentView => ({
  ...Struct.pick(row, ...paymentWireColumns),
  status: paymentStatusOf(row),
  fx: row.fx_rate === null || row.fx_rate_date === null
    ? null
    : { source: "ECB" as const, inr_per_usd: row.fx_rate, rate_date: row.fx_rate_date },
  card: row.card_last4 === null ? null : { brand: row.card_brand ?? "card", last4: row.card_last4 }
})
