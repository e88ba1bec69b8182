import type { ApprovalId, OrgId } from "@agent-gateway/contract/Domain/Ids.js"
import { amountOf } from "@agent-gateway/contract/Domain/Money.js"
import type { Approval } from "@agent-gateway/contract/Domain/Purchasing.js"
import { useState } from "react"
import { Link, useParams } from "react-router"
import { useApiMutation, useApiQuery, useCursorPages } from "../api/hooks.js"
import { useOrg } from "../api/org.js"
import { PagedTable } from "../components/PagedTable.js"
import { Countdown, Credits, Empty, ErrorNotice, Loaded, Status, When } from "../components/ui.js"

/** Lists that change while open are read again this often. */
const REFRESH_MS = 5_000

const reasonText = {
  over_threshold: "above the agent's approval threshold",
  over_budget: "over the agent's monthly budget"
} as const

const Decide = ({ orgId, approval }: { readonly orgId: OrgId; readonly approval: Approval }) => {
  const [note, setNote] = useState("")
  const invalidate = [["approvals", orgId]] as const
  const approve = useApiMutation(
    (c) => c.orgPurchasing.approve({ path: { orgId, id: approval.id }, payload: { note: note || null } }),
    invalidate
  )
  const reject = useApiMutation(
    (c) => c.orgPurchasing.reject({ path: { orgId, id: approval.id }, payload: { note: note || null } }),
    invalidate
  )
  const busy = approve.isPending || reject.isPending
  return (
    <div className="stack">
      <label>
        Note (optional)
        <input value={note} onChange={(e) => setNote(e.target.value)} maxLength={2000} />
      </label>
      <div className="actions">
        <button type="button" disabled={busy} onClick={() => approve.mutate(undefined)}>Approve</button>
        <button type="button" className="danger" disabled={busy} onClick={() => reject.mutate(undefined)}>
          Reject
        </button>
      </div>
      <ErrorNotice error={approve.error ?? reject.error} />
    </div>
  )
}

/** The agents of the org by id, to name the one that asked. */
type AgentNames = ReadonlyMap<string, { readonly name: string; readonly mode: "test" | "live" }>

/** "researcher (live agent)", or the id's start while the agents load. */
export const AgentName = ({ agentId, agents }: { readonly agentId: string; readonly agents: AgentNames }) => {
  const agent = agents.get(agentId)
  return agent === undefined ?
    <span className="muted">agent {agentId.slice(0, 8)}</span> :
    (
      <span className="agent-name">
        {agent.name} <Status value={agent.mode} />
      </span>
    )
}

const useAgentNames = (orgId: OrgId): AgentNames => {
  const agents = useApiQuery(["agents", orgId], (c) => c.agents.list({ path: { orgId }, urlParams: { limit: 200 } }))
  return new Map((agents.data?.agents ?? []).map((a) => [a.id, { name: a.name, mode: a.mode }]))
}

const ApprovalCard = ({ orgId, approval, open, agents }: {
  readonly orgId: OrgId
  readonly approval: Approval
  readonly open: boolean
  readonly agents: AgentNames
}) => (
  <li className={`card approval${open ? " focused" : ""}`} data-testid={`approval-${approval.id}`}>
    <div className="agent-head">
      <h3>
        <Link to={`/orgs/${orgId}/approvals/${approval.id}`}>{approval.tool.name}</Link>
      </h3>
      <Status value={approval.status} />
    </div>
    <p className="asked-by">
      Asked by <AgentName agentId={approval.agent_id} agents={agents} />
    </p>
    <p>
      {approval.item_count} item{approval.item_count === 1 ? "" : "s"} for up to{" "}
      <Credits amount={amountOf(approval.amount_credits)} />, {reasonText[approval.reason]}.
    </p>
    {approval.status === "waiting"
      ? (
        <>
          <p>
            Expires in <Countdown until={approval.expires_at.toISOString()} />
          </p>
          <Decide orgId={orgId} approval={approval} />
        </>
      )
      : (
        <p className="muted">
          {approval.decided_by_email === null ? null : <>By {approval.decided_by_email}.</>}
          {approval.note}
        </p>
      )}
    <p className="muted">
      Asked <When at={approval.created_at} />
    </p>
  </li>
)

/** Approvals: the waiting ones first, each with its countdown; then the decided ones, by pages. */
export const ApprovalsPage = () => {
  const org = useOrg()
  const { approvalId } = useParams()
  const pages = useCursorPages<ApprovalId>()
  const agents = useAgentNames(org.id)
  const one = useApiQuery(
    ["approvals", org.id, "one", approvalId],
    // The address's id as the contract's; the request's encoding checks it is a UUID.
    (c) => c.orgPurchasing.approval({ path: { orgId: org.id, id: (approvalId ?? "") as ApprovalId } }),
    { enabled: approvalId !== undefined }
  )
  const waiting = useApiQuery(
    ["approvals", org.id, "waiting"],
    (c) => c.orgPurchasing.approvals({ path: { orgId: org.id }, urlParams: { status: "waiting", limit: 200 } }),
    { refetchInterval: REFRESH_MS }
  )
  const all = useApiQuery(
    ["approvals", org.id, "all", pages.after],
    (c) =>
      c.orgPurchasing.approvals({ path: { orgId: org.id }, urlParams: { limit: 20, starting_after: pages.after } }),
    { refetchInterval: pages.after === undefined ? REFRESH_MS : false }
  )
  return (
    <div className="stack">
      <h1>Approvals</h1>
      {approvalId === undefined ? null : (
        <Loaded query={one}>
          {(data) => (
            <ul className="plain">
              <ApprovalCard orgId={org.id} approval={data.approval} open agents={agents} />
            </ul>
          )}
        </Loaded>
      )}
      <h2>Waiting</h2>
      <Loaded query={waiting}>
        {(data) => {
          // The one open above is not listed again.
          const others = data.approvals.filter((a) => a.id !== approvalId)
          return others.length === 0 ?
            <Empty>{approvalId === undefined ? "Nothing waits for a decision." : "Nothing else waits."}</Empty> :
            (
              <ul className="plain stack">
                {others.map((a) => (
                  <ApprovalCard
                    key={a.id}
                    orgId={org.id}
                    approval={a}
                    open={false}
                    agents={agents}
                  />
                ))}
              </ul>
            )
        }}
      </Loaded>
      <h2>All</h2>
      <PagedTable
        query={all}
        pages={pages}
        rows={(data) => data.approvals}
        empty="No approvals yet."
        head={["Tool", "Agent", "Amount", "Status", "Asked"]}
        row={(a) => (
          <tr key={a.id}>
            <td>
              <Link to={`/orgs/${org.id}/approvals/${a.id}`}>{a.tool.name}</Link>
            </td>
            <td>
              <AgentName agentId={a.agent_id} agents={agents} />
            </td>
            <td>
              <Credits amount={amountOf(a.amount_credits)} />
            </td>
            <td>
              <Status value={a.status} />
            </td>
            <td>
              <When at={a.created_at} />
            </td>
          </tr>
        )}
      />
    </div>
  )
}
