import { DeletionRequestId } from "@agent-gateway/contract/Domain/Ids.js"
import { Empty, ErrorNotice, Loaded, Status, When } from "../../components/ui.js"
import { useAdminMutation, useAdminQuery } from "./adminApi.js"

/** Data-deletion requests waiting to be carried out, and carrying one out. */
export const DeletionsPage = () => {
  const requests = useAdminQuery(
    ["deletions"],
    (c) => c.adminOrgs.deletionRequests({ urlParams: { status: "pending" } })
  )
  const carryOut = useAdminMutation((c, id: DeletionRequestId) => c.adminOrgs.carryOutDeletion({ path: { id } }), [[
    "deletions"
  ], [
    "audit"
  ]])
  return (
    <section className="stack">
      <h1>Data-deletion requests</h1>
      <ErrorNotice error={carryOut.error} />
      <Loaded query={requests}>
        {(data) =>
          data.deletion_requests.length === 0 ? <Empty>No pending requests.</Empty> : (
            <ul className="plain stack">
              {data.deletion_requests.map((r) => (
                <li key={r.id} className="card">
                  <p>
                    <Status value={r.status} /> <b>{r.org_name}</b>, asked by {r.requested_by_email}{" "}
                    <When at={r.created_at} />
                  </p>
                  <p>{r.reason ?? <span className="muted">No reason given.</span>}</p>
                  <button
                    type="button"
                    className="danger"
                    disabled={carryOut.isPending}
                    onClick={() =>
                      confirm(`Erase the personal data of ${r.org_name} and close it? This cannot be undone.`) &&
                      carryOut.mutate(DeletionRequestId.make(r.id))}
                  >
                    Carry out
                  </button>
                </li>
              ))}
            </ul>
          )}
      </Loaded>
    </section>
  )
}
