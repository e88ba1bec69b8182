import { minorToDecimal } from "@agent-gateway/contract/Domain/Billing.js"
import { idOrNull, type OrgId, PaymentId } from "@agent-gateway/contract/Domain/Ids.js"
import { amountOf } from "@agent-gateway/contract/Domain/Money.js"
import type { PaymentView } from "@agent-gateway/contract/Domain/Payment.js"
import { useQueryClient } from "@tanstack/react-query"
import { useEffect } from "react"
import { useSearchParams } from "react-router"
import { useApiQuery } from "../../api/hooks.js"
import { Credits, ErrorNotice, Spinner } from "../ui.js"

/** While the payment is being confirmed, ask again every few seconds. */
const POLL_MS = 2_000

const Outcome = ({ payment, balance }: {
  readonly payment: PaymentView
  readonly balance: { readonly credits: string; readonly usd: string } | null
}) => {
  switch (payment.status) {
    case "succeeded":
    case "refunded":
    case "partially_refunded":
    case "disputed":
      return payment.purpose === "plan" ?
        (
          <p role="status">
            Subscribed: the {payment.plan === "max" ? "Max" : "Pro"} plan is on, ${minorToDecimal(payment.amount_minor)}
            {" "}
            paid for its first month.
          </p>
        ) :
        (
          <p role="status">
            Paid: <Credits amount={amountOf(payment.credits)} /> added.
            {balance === null ? null : (
              <>
                {" "}Your balance is now <Credits amount={balance} />.
              </>
            )}
          </p>
        )
    case "pending":
      return <p role="status">Processing: your payment is being confirmed. This page updates by itself.</p>
    case "failed":
      return (
        <p role="alert">
          The payment failed{payment.failure_message === null ? "." : `: ${payment.failure_message}`}{" "}
          Nothing was charged; you can try again with another card.
        </p>
      )
    default:
      return <p role="status">The payment was cancelled; nothing was charged.</p>
  }
}

/**
 * Back from the payment page (`?payment=<id>`, with `checkout=canceled` when the owner left
 * it): says how the payment ended and the new balance. A cancelled checkout is ended so its
 * amount counts no more against the new-account limit.
 */
export const CheckoutReturn = ({ orgId, balance }: {
  readonly orgId: OrgId
  readonly balance: { readonly credits: string; readonly usd: string } | null
}) => {
  const [search, setSearch] = useSearchParams()
  // A payment id that is not one names no payment: nothing to ask about.
  const paymentId = idOrNull(PaymentId, search.get("payment"))
  const canceled = search.get("checkout") === "canceled"
  const queryClient = useQueryClient()
  const outcome = useApiQuery(
    ["checkout-return", orgId, paymentId, canceled],
    (c) =>
      canceled
        ? c.billing.cancel({ path: { orgId, paymentId: paymentId! } })
        : c.billing.confirm({ path: { orgId, paymentId: paymentId! } }),
    {
      enabled: paymentId !== null,
      refetchInterval: (data) => (data?.payment.status === "pending" && !canceled ? POLL_MS : false)
    }
  )
  const status = outcome.data?.payment.status
  useEffect(() => {
    if (status === undefined) return
    void queryClient.invalidateQueries({ queryKey: ["billing", orgId] })
    void queryClient.invalidateQueries({ queryKey: ["payments", orgId] })
  }, [status, orgId, queryClient])
  if (paymentId === null) return null
  return (
    <section className="card stack notice" aria-label="Payment">
      <h2>Your payment</h2>
      {outcome.error
        ? <ErrorNotice error={outcome.error} />
        : outcome.data === undefined
        ? <Spinner label="Checking the payment" />
        : <Outcome payment={outcome.data.payment} balance={balance} />}
      <div className="actions">
        <button
          type="button"
          className="secondary"
          onClick={() => {
            search.delete("payment")
            search.delete("session_id")
            search.delete("checkout")
            setSearch(search, { replace: true })
          }}
        >
          Done
        </button>
      </div>
    </section>
  )
}
