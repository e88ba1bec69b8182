import { idOrNull, type OrgId, PaymentId } from "@agent-gateway/contract/Domain/Ids.js"
import { amountOf } from "@agent-gateway/contract/Domain/Money.js"
import { useSearchParams } from "react-router"
import { useApiMutation, useApiQuery } from "../../api/hooks.js"
import { Credits, ErrorNotice } from "../ui.js"

/**
 * From the mail about an automatic top-up the card's bank wants confirmed
 * (`?authenticate=<payment>`): names the credits and sends an owner to the payment page for
 * them, where the bank asks the card holder; the card is kept again for auto-reload.
 */
export const FinishCharge = ({ orgId }: { readonly orgId: OrgId }) => {
  const [search] = useSearchParams()
  const paymentId = idOrNull(PaymentId, search.get("authenticate"))
  const payment = useApiQuery(
    ["payment", orgId, paymentId],
    (c) => c.billing.payment({ path: { orgId, paymentId: paymentId! } }),
    { enabled: paymentId !== null }
  )
  const finish = useApiMutation((c, credits: string) =>
    c.billing.checkout({
      path: { orgId },
      payload: { credits, currency: "usd", save_card: true, idempotency_key: `authenticate:${paymentId}` }
    })
  )
  if (paymentId === null || payment.data === undefined) return null
  const failed = payment.data.payment
  if (failed.purpose !== "auto_reload" || failed.status !== "failed") return null
  return (
    <section className="card stack" role="region" aria-label="Confirm the automatic top-up">
      <p>
        An automatic top-up of <Credits amount={amountOf(failed.credits)} />{" "}
        needs you to confirm it with your card's bank.
      </p>
      <p>
        <button
          type="button"
          disabled={finish.isPending || finish.isSuccess}
          onClick={() =>
            finish.mutate(failed.credits.toString(), {
              onSuccess: (started) => {
                if (started.checkout_url !== null) window.location.assign(started.checkout_url)
              }
            })}
        >
          Continue to payment
        </button>
      </p>
      <ErrorNotice error={finish.error} />
    </section>
  )
}
