import type { OrgId } from "@agent-gateway/contract/Domain/Ids.js"
import { useState } from "react"
import { useApiMutation, useApiQuery, useCursorPages } from "../api/hooks.js"
import { useOrg } from "../api/org.js"
import { BuyCredits } from "../components/billing/BuyCredits.js"
import { CheckoutReturn } from "../components/billing/CheckoutReturn.js"
import { FinishCharge } from "../components/billing/FinishCharge.js"
import { ManageBilling } from "../components/billing/ManageBilling.js"
import { PlanChooser } from "../components/billing/PlanChooser.js"
import { SavedCard } from "../components/billing/SavedCard.js"
import { ExportPanel } from "../components/Export.js"
import { credits, dollars, ownerText, paidAmount } from "../components/format.js"
import { PagedTable } from "../components/PagedTable.js"
import { Credits, ErrorNotice, LiveClosedNotice, Loaded, Status, TrialTerms, When } from "../components/ui.js"

/** What a payment bought, in words. */
const paymentWhat = { top_up: "Credits", auto_reload: "Credits (auto-reload)", plan: "Plan" } as const
const planNames = { payg: "Pay as you go", pro: "Pro", max: "Max" } as const

const Payments = ({ orgId }: { readonly orgId: OrgId }) => {
  const pages = useCursorPages()
  const payments = useApiQuery(
    ["payments", orgId, pages.after],
    (c) => c.billing.payments({ path: { orgId }, urlParams: { limit: 20, starting_after: pages.after } })
  )
  return (
    <PagedTable
      query={payments}
      pages={pages}
      rows={(data) => data.payments}
      empty="No payments yet."
      head={["What", "Amount", "Credits", "Status", "When"]}
      label="Payments"
      stackOnPhone
      row={(p) => (
        <tr key={p.id}>
          <td>{paymentWhat[p.purpose]}{p.plan === null ? "" : `: ${planNames[p.plan]}`}</td>
          <td>{paidAmount(p.amount_minor, p.currency)}</td>
          <td>{p.credits === 0n ? "—" : `${credits(p.credits)} cr`}</td>
          <td>
            <Status value={p.status} />
            {p.failure_message === null ? null : <small>{p.failure_message}</small>}
          </td>
          <td>
            <When at={p.created_at} />
          </td>
        </tr>
      )}
    />
  )
}

/** Balance, top-ups, saved card, auto-reload, plan (and the founding offer), payment history. */
export const BillingPage = () => {
  const org = useOrg()
  const summary = useApiQuery(["billing", org.id], (c) => c.billing.summary({ path: { orgId: org.id } }))
  const usage = useApiQuery(["usage", org.id], (c) => c.usage.get({ path: { orgId: org.id }, urlParams: {} }))
  const [reload, setReload] = useState({ enabled: false, threshold: "", amount: "", limit: "" })
  const setAutoReload = useApiMutation(
    (c) =>
      c.billing.setAutoReload({
        path: { orgId: org.id },
        payload: {
          enabled: reload.enabled,
          threshold_credits: reload.threshold || undefined,
          amount_credits: reload.amount || undefined,
          monthly_limit_credits: reload.limit || undefined
        }
      }),
    [["billing", org.id]]
  )
  const removeCard = useApiMutation((c) => c.billing.removeCard({ path: { orgId: org.id } }), [["billing", org.id]])
  const owner = org.role === "owner"
  return (
    <div className="stack">
      <h1>Billing</h1>
      <Loaded query={summary}>
        {(data) => (
          <>
            {data.provider.notice === null ? null : <p className="notice">{ownerText(data.provider.notice)}</p>}
            <CheckoutReturn orgId={org.id} balance={data.balance} />
            {owner ? <FinishCharge orgId={org.id} /> : null}
            <div className="tiles">
              <div className="tile">
                <span className="tile-label">Balance</span>
                <span className="tile-value">
                  <Credits amount={data.balance} />
                </span>
                {usage.data === undefined ? null : <TrialTerms usage={usage.data} />}
              </div>
              <div className="tile">
                <span className="tile-label">Plan</span>
                <span className="tile-value">{data.plan.name}</span>
                <span className="muted">
                  {dollars(data.plan.monthly_fee_usd)} a month{data.plan.renews_at === null ? "" : (
                    <>
                      , renews <When at={data.plan.renews_at} dateOnly />
                    </>
                  )}
                </span>
              </div>
              <div className="tile">
                <span className="tile-label">Card</span>
                <span className="tile-value">
                  {data.card === null ? "none saved" : `${data.card.brand} …${data.card.last4}`}
                </span>
              </div>
            </div>
            {owner
              ? (
                <>
                  {usage.data?.live_purchases_open === false ? <LiveClosedNotice /> : null}
                  <BuyCredits
                    orgId={org.id}
                    limits={data.top_up_limits}
                    inrAvailable={data.top_up_limits.currencies.includes("inr") && data.fx.status === "available"}
                  />
                </>
              )
              : null}
            <section className="card stack">
              <h2>Auto-reload</h2>
              <p>
                {data.auto_reload.enabled
                  ? (
                    <>
                      On: below <Credits amount={data.auto_reload.threshold!} />, buy{" "}
                      <Credits amount={data.auto_reload.amount!} />
                    </>
                  )
                  : "Off"}
                {data.auto_reload.disabled_reason === null ? null : <>({data.auto_reload.disabled_reason})</>}.
                Auto-reload charges the saved card in USD.
              </p>
              {data.top_up_limits.currencies.includes("inr")
                ? (
                  <details>
                    <summary>Paying with an India-issued card?</summary>
                    <p>{data.auto_reload.note}</p>
                  </details>
                )
                : null}
              {owner
                ? (
                  <form
                    className="inline"
                    onSubmit={(event) => {
                      event.preventDefault()
                      setAutoReload.mutate(undefined)
                    }}
                  >
                    <label className="check">
                      <input
                        type="checkbox"
                        checked={reload.enabled}
                        onChange={(e) => setReload({ ...reload, enabled: e.target.checked })}
                      />{" "}
                      On
                    </label>
                    <label>
                      Under (credits)<input
                        inputMode="numeric"
                        value={reload.threshold}
                        onChange={(e) => setReload({ ...reload, threshold: e.target.value })}
                      />
                    </label>
                    <label>
                      Buy (credits)<input
                        inputMode="numeric"
                        value={reload.amount}
                        onChange={(e) => setReload({ ...reload, amount: e.target.value })}
                      />
                    </label>
                    <label>
                      Monthly limit (credits)<input
                        inputMode="numeric"
                        value={reload.limit}
                        onChange={(e) => setReload({ ...reload, limit: e.target.value })}
                      />
                    </label>
                    <button type="submit" disabled={setAutoReload.isPending}>Save</button>
                    <ErrorNotice error={setAutoReload.error} />
                  </form>
                )
                : null}
              {owner ? <SavedCard orgId={org.id} hasCard={data.card !== null} /> : null}
              {owner && data.card !== null
                ? (
                  <button
                    type="button"
                    className="danger"
                    onClick={() =>
                      confirm("Forget the saved card? Auto-reload switches off.") && removeCard.mutate(undefined)}
                  >
                    Remove the card
                  </button>
                )
                : null}
              <ErrorNotice error={removeCard.error} />
            </section>
            {owner
              ? (
                <>
                  <PlanChooser
                    orgId={org.id}
                    current={data.plan.id}
                    founding={data.plan.founding_offer !== null}
                    offerClaim={data.plan.founding_offer_claim}
                    hasSubscription={data.plan.id !== "payg" && data.plan.renews_at !== null}
                  />
                  <ManageBilling orgId={org.id} />
                </>
              )
              : null}
          </>
        )}
      </Loaded>
      <ExportPanel orgId={org.id} dataset="ledger" />
      <section className="card">
        <h2>Payments</h2>
        <Payments orgId={org.id} />
      </section>
    </div>
  )
}
