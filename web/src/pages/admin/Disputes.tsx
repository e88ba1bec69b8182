import type { DisputeId } from "@agent-gateway/contract/Domain/Ids.js"
import { amountOf } from "@agent-gateway/contract/Domain/Money.js"
import { useState } from "react"
import { Credits, Empty, ErrorNotice, Loaded, Status, When } from "../../components/ui.js"
import { useAdminMutation, useAdminQuery } from "./adminApi.js"

/** The dispute queue, oldest open first: uphold (refunds through the ledger) or reject, with a reason. */
export const DisputesPage = () => {
  const [status, setStatus] = useState<"open" | "upheld" | "rejected">("open")
  const [reasons, setReasons] = useState<Record<string, string>>({})
  const disputes = useAdminQuery(
    ["disputes", status],
    (c) => c.adminDisputes.list({ urlParams: { status, limit: 50 } })
  )
  const decide = useAdminMutation(
    (c, d: { id: DisputeId; decision: "upheld" | "rejected" }) =>
      c.adminDisputes.decide({ path: { id: d.id }, payload: { decision: d.decision, reason: reasons[d.id] ?? "" } }),
    [["disputes"]]
  )
  return (
    <section className="stack">
      <h1>Disputes</h1>
      <label>
        Show
        <select value={status} onChange={(e) => setStatus(e.target.value as typeof status)}>
          <option value="open">open (oldest first)</option>
          <option value="upheld">upheld</option>
          <option value="rejected">rejected</option>
        </select>
      </label>
      <ErrorNotice error={decide.error} />
      <Loaded query={disputes}>
        {(data) =>
          data.disputes.length === 0 ? <Empty>No {status} disputes.</Empty> : (
            <ul className="plain stack">
              {data.disputes.map((d) => (
                <li key={d.id} className="card" data-testid={`dispute-${d.id}`}>
                  <p>
                    <Status value={d.status} /> Item {d.item_index} of receipt <code>{d.receipt_id}</code>, cost{" "}
                    <Credits amount={amountOf(d.item_cost)} />, opened <When at={d.created_at} />
                  </p>
                  <p>{d.reason ?? <span className="muted">No reason given.</span>}</p>
                  {d.status === "open"
                    ? (
                      <div className="inline">
                        <label>
                          Reason for the decision
                          <input
                            value={reasons[d.id] ?? ""}
                            onChange={(e) => setReasons({ ...reasons, [d.id]: e.target.value })}
                          />
                        </label>
                        <button type="button" onClick={() => decide.mutate({ id: d.id, decision: "upheld" })}>
                          Uphold (refund)
                        </button>
                        <button
                          type="button"
                          className="danger"
                          onClick={() => decide.mutate({ id: d.id, decision: "rejected" })}
                        >
                          Reject
                        </button>
                      </div>
                    )
                    : (
                      <p className="muted">
                        {d.note} Refund <Credits amount={amountOf(d.refunded_credits)} />.
                      </p>
                    )}
                </li>
              ))}
            </ul>
          )}
      </Loaded>
    </section>
  )
}
