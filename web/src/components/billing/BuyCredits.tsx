import type { OrgId } from "@agent-gateway/contract/Domain/Ids.js"
import { useRef, useState } from "react"
import { useApiMutation } from "../../api/hooks.js"
import { dollars } from "../format.js"
import { ErrorNotice } from "../ui.js"

type Limits = { readonly min: { readonly usd: string }; readonly max: { readonly usd: string } }

/** One idempotency key per distinct request: a double click or a retry of the same purchase makes one checkout. */
const useKeyFor = () => {
  const last = useRef<{ request: string; key: string } | null>(null)
  return (request: string) => {
    if (last.current?.request !== request) last.current = { request, key: crypto.randomUUID() }
    return last.current.key
  }
}

/**
 * Buy credits: the owner picks an amount, and is sent to the payment page (Stripe's hosted
 * checkout, or the service's own sandbox page in development) to pay; no card details are
 * typed on our pages. Cards are kept for auto-reload in USD only.
 */
export const BuyCredits = ({ orgId, limits, inrAvailable }: {
  readonly orgId: OrgId
  readonly limits: Limits
  readonly inrAvailable: boolean
}) => {
  const [usd, setUsd] = useState("20")
  const [currency, setCurrency] = useState<"usd" | "inr">("usd")
  const [saveCard, setSaveCard] = useState(false)
  const keyFor = useKeyFor()
  const checkout = useApiMutation((c) => {
    const keep = currency === "usd" && saveCard
    return c.billing.checkout({
      path: { orgId },
      payload: {
        amount_usd: usd,
        currency,
        save_card: keep,
        idempotency_key: keyFor(JSON.stringify([usd, currency, keep]))
      }
    })
  })
  const leaving = checkout.isSuccess && checkout.data.checkout_url !== null
  return (
    <section className="card stack" aria-label="Buy credits">
      <h2>Buy credits</h2>
      <form
        className="inline"
        onSubmit={(event) => {
          event.preventDefault()
          checkout.mutate(undefined, {
            onSuccess: (started) => {
              if (started.checkout_url !== null) window.location.assign(started.checkout_url)
            }
          })
        }}
      >
        <label>
          Amount in US dollars ({dollars(limits.min.usd)} to {dollars(limits.max.usd)})
          <input inputMode="decimal" value={usd} onChange={(e) => setUsd(e.target.value)} />
        </label>
        <label>
          Pay in
          <select value={currency} onChange={(e) => setCurrency(e.target.value === "inr" ? "inr" : "usd")}>
            <option value="usd">US dollars</option>
            <option value="inr" disabled={!inrAvailable}>
              Indian rupees{inrAvailable ? "" : " (not available right now)"}
            </option>
          </select>
        </label>
        {currency === "usd"
          ? (
            <label className="check">
              <input type="checkbox" checked={saveCard} onChange={(e) => setSaveCard(e.target.checked)} />{" "}
              Keep the card for automatic reloads
            </label>
          )
          : null}
        <button type="submit" disabled={checkout.isPending || leaving}>
          {leaving ? "Opening the payment page…" : "Continue to payment"}
        </button>
      </form>
      {currency === "inr"
        ? (
          <p className="muted">
            Payments in rupees are one-time payments: under the Reserve Bank of India's rules for cards issued in India,
            the card is not kept for automatic reloads. The amount is converted at the European Central Bank's reference
            rate.
          </p>
        )
        : null}
      <p className="muted">You pay on a secure payment page and come back here when it is done.</p>
      <ErrorNotice error={checkout.error} />
    </section>
  )
}
