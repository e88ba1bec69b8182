import { amountOf } from "@agent-gateway/contract/Domain/Money.js"
import { Link, useParams } from "react-router"
import { useApiQuery } from "../api/hooks.js"
import { useOrg } from "../api/org.js"
import { Credits, Empty, Loaded, ProgressBar, Status, TestNote, When } from "../components/ui.js"
import { ReceiptDetail } from "./Receipts.js"

/**
 * Jobs (purchases of more than 25 inputs run in the background): a live progress bar for
 * each running job, per-item outcomes once done. Read from the org's receipts, which name
 * their job and count their items.
 */
export const JobsPage = () => {
  const org = useOrg()
  const { receiptId } = useParams()
  const receipts = useApiQuery(
    ["receipts", org.id, "jobs"],
    (c) => c.orgPurchasing.receipts({ path: { orgId: org.id }, urlParams: { limit: 100 } }),
    {
      // Every second while a job runs (its progress bar); otherwise often enough that a new job shows up.
      refetchInterval: (data) => data?.receipts.some((r) => r.job_id !== null && r.status === "running") ? 1000 : 3000
    }
  )
  const agents = useApiQuery(
    ["agents", org.id],
    (c) => c.agents.list({ path: { orgId: org.id }, urlParams: { limit: 200 } })
  )
  const names = new Map((agents.data?.agents ?? []).map((a) => [a.id, a.name]))
  return (
    <div className="stack">
      <h1>Jobs</h1>
      {receiptId === undefined ? null : <ReceiptDetail orgId={org.id} receiptId={receiptId} />}
      <Loaded query={receipts}>
        {(data) => {
          const jobs = data.receipts.filter((r) => r.job_id !== null)
          return jobs.length === 0 ?
            <Empty>No jobs yet. A purchase of more than 25 inputs runs as a job.</Empty> :
            (
              <ul className="plain stack">
                {jobs.map((r) => {
                  const done = r.item_count - r.counts.pending
                  return (
                    <li key={r.id} className="card" data-testid={`job-${r.job_id}`}>
                      <div className="agent-head">
                        <h2 className="card-title">
                          <Link to={`/orgs/${org.id}/jobs/${r.id}`}>{r.tool.name}</Link>
                        </h2>
                        <Status value={r.status} />
                        {r.mode === "test" ? <TestNote /> : null}
                        <span className="muted">by {names.get(r.agent_id) ?? `agent ${r.agent_id.slice(0, 8)}`}</span>
                      </div>
                      <ProgressBar done={done} total={r.item_count} label={`Job ${r.job_id} progress`} />
                      <p className="muted">
                        {r.counts.passed} passed, {r.counts.partial} partial, {r.counts.failed} failed,{" "}
                        {r.counts.expired} expired; {r.mode === "test" ? "priced" : "charged"}{" "}
                        <Credits amount={amountOf(r.charged_credits)} />. Started <When at={r.created_at} />
                        {r.completed_at === null ? null : (
                          <>
                            , finished <When at={r.completed_at} />
                          </>
                        )}.
                      </p>
                    </li>
                  )
                })}
              </ul>
            )
        }}
      </Loaded>
    </div>
  )
}
