import { Link } from "react-router"
import { useApiQuery } from "../api/hooks.js"
import { useOrg } from "../api/org.js"
import { ColumnChart, RowChart } from "../components/Charts.js"
import { Table } from "../components/PagedTable.js"
import { Credits, Empty, Loaded, When } from "../components/ui.js"

/** Money at a glance: balance, trial, this month's spend per day and per agent, top endpoints and tools. */
export const OverviewPage = () => {
  const org = useOrg()
  const usage = useApiQuery(["usage", org.id], (c) => c.usage.get({ path: { orgId: org.id }, urlParams: {} }))
  const waiting = useApiQuery(
    ["approvals", org.id, "waiting"],
    (c) => c.orgPurchasing.approvals({ path: { orgId: org.id }, urlParams: { status: "waiting", limit: 200 } })
  )
  return (
    <div className="stack">
      <h1>{org.name}</h1>
      <Loaded query={usage}>
        {(data) => (
          <>
            <div className="tiles">
              <div className="tile">
                <span className="tile-label">Balance</span>
                <span className="tile-value" data-testid="balance">
                  <Credits amount={data.balance} />
                </span>
                {data.credits_frozen ? <span className="badge badge-disabled">frozen</span> : null}
              </div>
              <div className="tile">
                <span className="tile-label">Spent {data.range.from} to {data.range.to}</span>
                <span className="tile-value" data-testid="total-spend">
                  <Credits amount={data.total_spend} />
                </span>
              </div>
              {data.trial === null ? null : (
                <div className="tile">
                  <span className="tile-label">Trial credits</span>
                  <span className="tile-value">
                    <Credits amount={data.trial.credits} />
                  </span>
                  <span className="muted">
                    {data.trial.expired ? "expired" : (
                      <>
                        until <When at={data.trial.expires_at} />
                      </>
                    )}
                  </span>
                </div>
              )}
              <div className="tile">
                <span className="tile-label">Waiting approvals</span>
                <span className="tile-value">
                  <Link to={`/orgs/${org.id}/approvals`}>{waiting.data?.approvals.length ?? "…"}</Link>
                </span>
              </div>
            </div>
            <section className="card">
              <h2>Spend per day</h2>
              <ColumnChart
                label="Credits spent per day"
                bars={data.by_day.map((day) => ({
                  label: day.day,
                  value: Number(day.spend.credits),
                  title: `${day.day}: ${day.spend.credits} credits ($${day.spend.usd})`
                }))}
              />
            </section>
            <section className="card">
              <h2>Spend per agent</h2>
              {data.by_agent.length === 0 ? <Empty>No agent has spent this month.</Empty> : (
                <RowChart
                  label="Credits spent per agent"
                  bars={data.by_agent.map((agent) => ({
                    label: agent.name,
                    value: Number(agent.spend.credits),
                    title: `${agent.spend.credits} cr ($${agent.spend.usd})`
                  }))}
                />
              )}
            </section>
            <div className="two-columns">
              <section className="card">
                <h2>Top endpoints</h2>
                <Table
                  rows={data.top_endpoints}
                  empty="No gateway spend yet."
                  head={["Endpoint", "Calls", "Spend"]}
                  row={(r) => (
                    <tr key={r.endpoint}>
                      <td>
                        <code>{r.endpoint}</code>
                      </td>
                      <td>{r.calls}</td>
                      <td>
                        <Credits amount={r.spend} />
                      </td>
                    </tr>
                  )}
                />
              </section>
              <section className="card">
                <h2>Top tools</h2>
                <Table
                  rows={data.top_tools}
                  empty="No purchases yet."
                  head={["Tool", "Items", "Spend"]}
                  row={(r) => (
                    <tr key={r.tool}>
                      <td>{r.name}</td>
                      <td>{r.items}</td>
                      <td>
                        <Credits amount={r.spend} />
                      </td>
                    </tr>
                  )}
                />
              </section>
            </div>
          </>
        )}
      </Loaded>
    </div>
  )
}
