import { useState } from "react"
import { useApiMutation, useApiQuery } from "../api/hooks.js"
import { useOrg } from "../api/org.js"
import { ErrorNotice, Loaded, Status, When } from "../components/ui.js"

/** Notification settings (low-balance alert) and the org's data-deletion request. */
export const SettingsPage = () => {
  const org = useOrg()
  const settings = useApiQuery(["notifications", org.id], (c) => c.events.notifications({ path: { orgId: org.id } }))
  const deletions = useApiQuery(["deletions", org.id], (c) => c.orgs.deletionRequests({ path: { orgId: org.id } }))
  const [lowBalance, setLowBalance] = useState<string | null>(null)
  const [reason, setReason] = useState("")
  const save = useApiMutation(
    (c, value: string) => c.events.setNotifications({ path: { orgId: org.id }, payload: { low_balance_usd: value } }),
    [["notifications", org.id]]
  )
  const requestDeletion = useApiMutation(
    (c) => c.orgs.requestDeletion({ path: { orgId: org.id }, payload: { reason: reason || null } }),
    [["deletions", org.id]]
  )
  const owner = org.role === "owner"
  return (
    <div className="stack">
      <h1>Settings</h1>
      <section className="card">
        <h2>Low-balance alert</h2>
        <Loaded query={settings}>
          {(data) => (
            <form
              className="inline"
              onSubmit={(event) => {
                event.preventDefault()
                save.mutate(lowBalance ?? data.notifications.low_balance_usd)
              }}
            >
              <label>
                Alert when the balance falls under (USD)
                <input
                  inputMode="decimal"
                  disabled={!owner}
                  value={lowBalance ?? data.notifications.low_balance_usd}
                  onChange={(e) => setLowBalance(e.target.value)}
                />
              </label>
              {owner ? <button type="submit" disabled={save.isPending}>Save</button> : null}
              {save.isSuccess ? <span role="status">Saved.</span> : null}
              <ErrorNotice error={save.error} />
            </form>
          )}
        </Loaded>
      </section>
      <section className="card">
        <h2>Delete the org's data</h2>
        <p>
          An administrator erases or anonymises the org's personal data; the ledger and receipts are kept without
          personal fields, and the org closes.
        </p>
        <Loaded query={deletions}>
          {(data) => (
            <ul className="plain">
              {data.deletion_requests.map((r) => (
                <li key={r.id}>
                  <Status value={r.status} /> asked by {r.requested_by_email} <When at={r.created_at} />
                </li>
              ))}
            </ul>
          )}
        </Loaded>
        {owner
          ? (
            <form
              className="inline"
              onSubmit={(event) => {
                event.preventDefault()
                if (confirm("Ask for this org's data to be deleted? The org closes once it is carried out.")) {
                  requestDeletion.mutate(undefined)
                }
              }}
            >
              <label>
                Reason (optional)
                <input value={reason} onChange={(e) => setReason(e.target.value)} maxLength={2000} />
              </label>
              <button type="submit" className="danger" disabled={requestDeletion.isPending}>Request deletion</button>
              <ErrorNotice error={requestDeletion.error} />
            </form>
          )
          : null}
      </section>
    </div>
  )
}
