import { AgentId, type CallId, type OrgId } from "@agent-gateway/contract/Domain/Ids.js"
import { amountOf } from "@agent-gateway/contract/Domain/Money.js"
import { useState } from "react"
import { useApiQuery, useCursorPages } from "../api/hooks.js"
import { useOrg } from "../api/org.js"
import { ExportPanel } from "../components/Export.js"
import { utcDay } from "../components/format.js"
import { PagedTable, Table } from "../components/PagedTable.js"
import { refusalOf } from "../components/refusals.js"
import { Credits, Loaded, Status, TestNote, When } from "../components/ui.js"

/** The instant a local day (the date input's "2026-11-27") starts, `plusDays` later. */
const localMidnight = (day: string, plusDays: number) => {
  const [year = 0, month = 1, date = 1] = day.split("-").map(Number)
  return new Date(year, month - 1, date + plusDays)
}

const statuses = ["", "succeeded", "refused", "failed", "timed_out", "test", "pending", "abandoned"] as const
const statusLabel = (s: (typeof statuses)[number]) =>
  s === "" ?
    "Any status" :
    s === "test" ?
    "test (no credits moved)" :
    s === "refused" ?
    "refused (by a provider or a limit)" :
    s.replace("_", " ")

/**
 * Requests the service refused before any call was made (the allowlist, an old key, the
 * budget, the balance, a rate limit...): counted per agent, UTC day and reason, not listed
 * one by one, so they sit beside the calls a provider refused.
 */
const RefusedByLimits = ({ orgId, agent, from, to, names }: {
  readonly orgId: OrgId
  readonly agent: string
  readonly from: string
  readonly to: string
  readonly names: ReadonlyMap<string, string>
}) => {
  const usage = useApiQuery(
    ["usage", orgId, from, to],
    (c) =>
      c.usage.get({
        path: { orgId },
        urlParams: { from: from === "" ? undefined : from, to: to === "" ? undefined : to }
      }),
    { refetchInterval: 5000 }
  )
  return (
    <section className="stack" aria-label="Refused by a limit">
      <h2>Refused by a limit or setting</h2>
      <p className="muted">Requests stopped before any call was made: nothing was charged.</p>
      <Loaded query={usage}>
        {(data) => {
          const rows = data.refusals.filter((r) => agent === "" || r.agent_id === agent)
          return (
            <Table
              rows={rows}
              empty="No requests were refused by a limit in these days."
              head={["Agent", "Day (UTC)", "Why", "Times", "Last"]}
              row={(r) => (
                <tr key={`${r.agent_id}/${r.day}/${r.code}`} data-code={r.code}>
                  <td>{names.get(r.agent_id) ?? r.name}</td>
                  <td>{utcDay(r.day)}</td>
                  <td>
                    {refusalOf(r.code).reason} <small className="muted">{refusalOf(r.code).todo}</small>
                  </td>
                  <td>{r.count}</td>
                  <td>
                    <When at={r.last_at} />
                  </td>
                </tr>
              )}
            />
          )
        }}
      </Loaded>
    </section>
  )
}

/** Gateway calls: endpoint, status, charge, latency; filtered by agent, status and endpoint. */
export const CallsPage = () => {
  const org = useOrg()
  const pages = useCursorPages<CallId>()
  const [agent, setAgent] = useState("")
  const [status, setStatus] = useState<(typeof statuses)[number]>("")
  const [endpoint, setEndpoint] = useState("")
  const [from, setFrom] = useState("")
  const [to, setTo] = useState("")
  const agents = useApiQuery(
    ["agents", org.id],
    (c) => c.agents.list({ path: { orgId: org.id }, urlParams: { limit: 200 } })
  )
  // Days are the viewer's: from the start of `from` to the end of `to`, in their time zone.
  const filters = {
    agent_id: agent === "" ? undefined : AgentId.make(agent),
    status: status || undefined,
    endpoint_contains: endpoint.trim() || undefined,
    from: from === "" ? undefined : localMidnight(from, 0),
    until: to === "" ? undefined : localMidnight(to, 1)
  }
  const calls = useApiQuery(
    ["calls", org.id, agent, status, endpoint, from, to, pages.after],
    (c) =>
      c.gatewayCalls.list({
        path: { orgId: org.id },
        urlParams: { limit: 50, starting_after: pages.after, ...filters }
      }),
    { refetchInterval: pages.after === undefined ? 5000 : false }
  )
  const names = new Map<string, string>((agents.data?.agents ?? []).map((a) => [a.id, a.name]))
  return (
    <div className="stack">
      <h1>Calls</h1>
      <form className="filters" aria-label="Filters" onSubmit={(e) => e.preventDefault()}>
        <label>
          Agent
          <select
            value={agent}
            onChange={(e) => {
              setAgent(e.target.value)
              pages.reset()
            }}
          >
            <option value="">All agents</option>
            {(agents.data?.agents ?? []).map((a) => <option key={a.id} value={a.id}>{a.name}</option>)}
          </select>
        </label>
        <label>
          Status
          <select
            value={status}
            onChange={(e) => {
              setStatus(e.target.value as (typeof statuses)[number])
              pages.reset()
            }}
          >
            {statuses.map((s) => <option key={s} value={s}>{statusLabel(s)}</option>)}
          </select>
        </label>
        <label>
          Endpoint
          <input
            type="search"
            value={endpoint}
            placeholder="part of its name, e.g. serp"
            onChange={(e) => {
              setEndpoint(e.target.value)
              pages.reset()
            }}
          />
        </label>
        <label>
          From
          <input
            type="date"
            value={from}
            onChange={(e) => {
              setFrom(e.target.value)
              pages.reset()
            }}
          />
        </label>
        <label>
          To
          <input
            type="date"
            value={to}
            onChange={(e) => {
              setTo(e.target.value)
              pages.reset()
            }}
          />
        </label>
      </form>
      <ExportPanel orgId={org.id} dataset="calls" />
      {status === "refused" ? <h2>Refused by a provider</h2> : null}
      <PagedTable
        query={calls}
        pages={pages}
        rows={(data) => data.calls}
        empty="No calls match."
        head={["Endpoint", "Agent", "Status", "Charged", "Latency", "When"]}
        row={(call) => (
          <tr key={call.id}>
            <td>
              <code>{call.endpoint_id}</code>
            </td>
            <td>{names.get(call.agent_id) ?? call.agent_id.slice(0, 8)}</td>
            <td>
              {call.status === "test" ? <TestNote /> : <Status value={call.status} />}
              {call.refunded === null ? null : <small>refunded {call.refunded.credits} cr</small>}
            </td>
            <td>
              {call.mode === "test"
                ? (
                  <small>
                    nothing (priced <Credits amount={amountOf(call.charged_credits)} />)
                  </small>
                )
                : <Credits amount={amountOf(call.charged_credits)} />}
            </td>
            <td>{call.latency_ms === null ? "—" : `${call.latency_ms} ms`}</td>
            <td>
              <When at={call.created_at} />
            </td>
          </tr>
        )}
      />
      {status === "refused" ? <RefusedByLimits orgId={org.id} agent={agent} from={from} to={to} names={names} /> : null}
    </div>
  )
}
