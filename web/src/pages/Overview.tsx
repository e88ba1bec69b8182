import { Link } from "react-router"
import { useApiQuery } from "../api/hooks.js"
import { useOrg } from "../api/org.js"
import { ColumnChart, RowChart } from "../components/Charts.js"
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
                {data.top_endpoints.length === 0 ? <Empty>No gateway spend yet.</Empty> : (
                  <table>
                    <thead>
                      <tr>
                        <th>Endpoint</th>
                        <th>Calls</th>
                        <th>Spend</th>
                      </tr>
                    </thead>
                    <tbody>
                      {data.top_endpoints.map((row) => (
                        <tr key={row.endpoint}>
                          <td>
                            <code>{row.endpoint}</code>
                          </td>
                          <td>{row.calls}</td>
                          <td>
                            <Credits amount={row.spend} />
                          </td>
                        </tr>
                      ))}
                    </tbody>
                  </table>
                )}
              </section>
              <section className="card">
                <h2>Top tools</h2>
                {data.top_tools.length === 0 ? <Empty>No purchases yet.</Empty> : (
                  <table>
                    <thead>
                      <tr>
                        <th>Tool</th>
                        <th>Items</th>
                        <th>Spend</th>
                      </tr>
                    </thead>
                    <tbody>
                      {data.top_tools.map((row) => (
                        <tr key={row.tool}>
                          <td>{row.name}</td>
                          <td>{row.items}</td>
                          <td>
                            <Credits amount={row.spend} />
                          </td>
                        </tr>
                      ))}
                    </tbody>
                  </table>
                )}
              </section>
            </div>
          </>
        )}
      </Loaded>
    </div>
  )
}
