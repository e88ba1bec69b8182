import { Link } from "react-router"
import { useApiQuery } from "../api/hooks.js"
import { useOrg } from "../api/org.js"
import { ColumnChart, RowChart } from "../components/Charts.js"
import { ExportPanel } from "../components/Export.js"
import { credits, dollars, utcDay } from "../components/format.js"
import { Table } from "../components/PagedTable.js"
import { Credits, Empty, Loaded, TrialTerms, When } from "../components/ui.js"

interface Step {
  readonly label: string
  readonly done: boolean
  readonly to: string
}

/** The first steps of a new org, until they are all done: each ticks itself off as it happens. */
const Onboarding = ({ orgId, steps }: { readonly orgId: string; readonly steps: ReadonlyArray<Step> }) =>
  steps.every((step) => step.done) ? null : (
    <section className="card onboarding" aria-label="Getting started">
      <h2>Getting started</h2>
      <ol>
        {steps.map((step) => (
          <li key={step.label} className={step.done ? "done" : ""} data-done={step.done}>
            <span aria-hidden="true">{step.done ? "✓" : "○"}</span>{" "}
            {step.done ? <span>{step.label}</span> : <Link to={`/orgs/${orgId}${step.to}`}>{step.label}</Link>}
            <span className="visually-hidden">{step.done ? " (done)" : " (to do)"}</span>
          </li>
        ))}
      </ol>
    </section>
  )

const plural = (count: number, noun: string) => `${count} ${noun}${count === 1 ? "" : "s"}`

/** Money at a glance: balance, trial, this month's spend per day and per agent, top endpoints and tools. */
export const OverviewPage = () => {
  const org = useOrg()
  const usage = useApiQuery(["usage", org.id], (c) => c.usage.get({ path: { orgId: org.id }, urlParams: {} }), {
    refetchInterval: 10_000
  })
  const waiting = useApiQuery(
    ["approvals", org.id, "waiting"],
    (c) => c.orgPurchasing.approvals({ path: { orgId: org.id }, urlParams: { status: "waiting", limit: 200 } }),
    { refetchInterval: 5_000 }
  )
  const agents = useApiQuery(
    ["agents", org.id],
    (c) => c.agents.list({ path: { orgId: org.id }, urlParams: { limit: 200 } })
  )
  return (
    <div className="stack">
      <h1>{org.name}</h1>
      {usage.data === undefined || agents.data === undefined ? null : (
        <Onboarding
          orgId={org.id}
          steps={[
            // An org exists only once its creator's phone is verified.
            { label: "Verify your phone", done: true, to: "" },
            { label: "Create an agent", done: agents.data.agents.length > 0, to: "/agents" },
            {
              label: "Copy its key into your agent",
              done: agents.data.agents.some((a) => a.key_prefix !== null),
              to: "/agents"
            },
            {
              label: "Make a first call",
              done: agents.data.agents.some((a) => a.key_last_used_at !== null),
              to: "/catalogue"
            },
            { label: "Add credits", done: usage.data.funded, to: "/billing" }
          ]}
        />
      )}
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
                <TrialTerms usage={data} showEnd={false} />
              </div>
              <div className="tile">
                <span className="tile-label">Spent {utcDay(data.range.from)} to {utcDay(data.range.to)}</span>
                <span className="tile-value" data-testid="total-spend">
                  <Credits amount={data.total_spend} />
                </span>
                <span className="muted">Live purchases and calls, net of refunds.</span>
              </div>
              <div className="tile" data-testid="test-activity">
                <span className="tile-label">Test activity, same days</span>
                <span className="tile-value">
                  {plural(data.test_activity.purchases, "purchase")}, {plural(data.test_activity.calls, "call")}
                </span>
                <span className="muted">
                  Priced <Credits amount={data.test_activity.priced} />: no credits moved.
                </span>
              </div>
              {data.trial === null ? null : (
                <div className="tile" data-testid="trial">
                  <span className="tile-label">Trial</span>
                  <span className="tile-value">
                    {data.trial.expired ? "ended" : data.funded ? "topped up" : (
                      <>
                        <Credits amount={data.balance} /> left
                      </>
                    )}
                  </span>
                  <span className="muted">
                    <Credits amount={data.trial.credits} /> granted
                    {data.trial.expired ? "" : (
                      <>
                        , ends <When at={data.trial.expires_at} dateOnly />
                      </>
                    )}.
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
                  label: utcDay(day.day),
                  value: Number(day.spend.credits),
                  title: `${utcDay(day.day)} (UTC): ${credits(day.spend.credits)} credits (${dollars(day.spend.usd)})`
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
                    title: `${credits(agent.spend.credits)} cr (${dollars(agent.spend.usd)})`
                  }))}
                />
              )}
            </section>
            <ExportPanel orgId={org.id} dataset="usage" />
            <div className="two-columns">
              <section className="card">
                <h2>Top endpoints</h2>
                <Table
                  rows={data.top_endpoints}
                  empty={data.test_activity.calls > 0
                    ? "No live gateway spend yet (test calls are counted apart, above)."
                    : "No gateway spend yet."}
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
                  empty={data.test_activity.purchases > 0
                    ? "No live purchases yet (test purchases are counted apart, above)."
                    : "No purchases yet."}
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
