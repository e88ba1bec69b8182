import { useState } from "react"
import { useApiQuery, useCursorPages } from "../api/hooks.js"
import { useOrg } from "../api/org.js"
import { PagedTable } from "../components/PagedTable.js"
import { Credits, Status, When } from "../components/ui.js"

const statuses = ["", "succeeded", "refused", "failed", "timed_out", "test", "pending", "abandoned"] as const

/** Gateway calls: endpoint, status, charge, latency; filtered by agent, status and endpoint. */
export const CallsPage = () => {
  const org = useOrg()
  const pages = useCursorPages()
  const [agent, setAgent] = useState("")
  const [status, setStatus] = useState<(typeof statuses)[number]>("")
  const [endpoint, setEndpoint] = useState("")
  const agents = useApiQuery(
    ["agents", org.id],
    (c) => c.agents.list({ path: { orgId: org.id }, urlParams: { limit: 200 } })
  )
  const filters = { agent_id: agent || undefined, status: status || undefined, endpoint: endpoint.trim() || undefined }
  const calls = useApiQuery(
    ["calls", org.id, filters, pages.after],
    (c) =>
      c.gatewayCalls.list({
        path: { orgId: org.id },
        urlParams: { limit: 50, starting_after: pages.after, ...filters }
      })
  )
  const names = new Map((agents.data?.agents ?? []).map((a) => [a.id, a.name]))
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
            {statuses.map((s) => <option key={s} value={s}>{s === "" ? "Any status" : s.replace("_", " ")}</option>)}
          </select>
        </label>
        <label>
          Endpoint
          <input
            value={endpoint}
            placeholder="endpoint id"
            onChange={(e) => {
              setEndpoint(e.target.value)
              pages.reset()
            }}
          />
        </label>
      </form>
      <PagedTable
        query={calls}
        pages={pages}
        rows={(data) => data.calls}
        empty="No calls match."
        head={["Endpoint", "Agent", "Status", "Charged", "Latency", "When"]}
        row={(call) => (
          <tr key={call.id}>
            <td>
              <code>{call.endpoint}</code>
            </td>
            <td>{names.get(call.agent_id) ?? call.agent_id.slice(0, 8)}</td>
            <td>
              <Status value={call.status} />
              {call.refunded === null ? null : <small>refunded {call.refunded.credits} cr</small>}
            </td>
            <td>
              <Credits amount={call.charged} />
            </td>
            <td>{call.latency_ms === null ? "—" : `${call.latency_ms} ms`}</td>
            <td>
              <When at={call.created_at} />
            </td>
          </tr>
        )}
      />
    </div>
  )
}
