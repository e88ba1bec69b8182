import { useState } from "react"
import { isApiError } from "../api/client.js"
import { useApiMutation, useApiQuery } from "../api/hooks.js"
import { useOrg } from "../api/org.js"
import { RowChart } from "../components/Charts.js"
import { ConnectedClients } from "../components/ConnectedClients.js"
import { Credits, Empty, ErrorNotice, Loaded, type ShownSecret, Status, useSecretOnce, When } from "../components/ui.js"

/** The spec: a new agent key is shown in the dashboard for 2 minutes. */
const KEY_SHOWN_MS = 2 * 60 * 1000

const wholeCredits = /^\d{1,18}$/

interface AgentForm {
  readonly name: string
  readonly budget: string
  readonly threshold: string
  readonly allowlist: string
}

const allowlistOf = (text: string) =>
  text.split(/[\s,]+/).map((entry) => entry.trim()).filter((entry) => entry.length > 0)

/** The form's fields as the API takes them, for creating and for editing. */
const agentPayload = (form: AgentForm) => ({
  name: form.name,
  monthly_budget_credits: BigInt(form.budget || "0"),
  approval_threshold_credits: form.threshold === "" ? null : BigInt(form.threshold),
  ip_allowlist: allowlistOf(form.allowlist)
})

/** The service names the allowlist entry it refused: that message belongs under the field. */
const allowlistProblemOf = (error: unknown) =>
  isApiError(error, "invalid_input") && /allowlist|address|range/i.test(error.message) ? error.message : null

/** Inline problems with the numbers, before anything is sent. */
const formProblems = (form: AgentForm) => ({
  budget: form.budget === "" || wholeCredits.test(form.budget) ? null : "Whole credits: digits only",
  threshold: form.threshold === "" || wholeCredits.test(form.threshold) ? null : "Whole credits: digits only"
})

const AgentFields = ({ form, setForm, serverError }: {
  readonly form: AgentForm
  readonly setForm: (form: AgentForm) => void
  readonly serverError: unknown
}) => {
  const problems = formProblems(form)
  const allowlistProblem = allowlistProblemOf(serverError)
  return (
    <>
      <label>
        Monthly budget (credits)
        <input
          inputMode="numeric"
          value={form.budget}
          onChange={(e) => setForm({ ...form, budget: e.target.value })}
          aria-invalid={problems.budget !== null}
        />
        {problems.budget ? <span className="field-error">{problems.budget}</span> : null}
      </label>
      <label>
        Approval threshold (credits, empty for none)
        <input
          inputMode="numeric"
          value={form.threshold}
          onChange={(e) => setForm({ ...form, threshold: e.target.value })}
          aria-invalid={problems.threshold !== null}
        />
        {problems.threshold ? <span className="field-error">{problems.threshold}</span> : null}
      </label>
      <label>
        IP allowlist (addresses or ranges, comma separated; empty for any)
        <input
          value={form.allowlist}
          onChange={(e) => setForm({ ...form, allowlist: e.target.value })}
          aria-invalid={allowlistProblem !== null}
        />
        {allowlistProblem ? <span className="field-error" role="alert">{allowlistProblem}</span> : null}
      </label>
    </>
  )
}

const NewAgent = (
  { orgId, onKey }: {
    readonly orgId: string
    readonly onKey: (key: ShownSecret) => void
  }
) => {
  const [form, setForm] = useState<AgentForm>({ name: "", budget: "10000", threshold: "", allowlist: "" })
  const [mode, setMode] = useState<"test" | "live">("test")
  const create = useApiMutation(
    (c, value: AgentForm) =>
      c.agents.create({
        path: { orgId },
        payload: { ...agentPayload(value), mode }
      }),
    [["agents", orgId]]
  )
  const problems = formProblems(form)
  return (
    <form
      className="card form-grid"
      aria-label="New agent"
      onSubmit={(event) => {
        event.preventDefault()
        if (problems.budget !== null || problems.threshold !== null) return
        create.mutate(form, {
          onSuccess: (created) => {
            onKey({ title: `Key of ${created.agent.name}`, secret: created.key, note: created.key_note })
            setForm({ name: "", budget: "10000", threshold: "", allowlist: "" })
          }
        })
      }}
    >
      <h2>New agent</h2>
      <label>
        Name
        <input required value={form.name} onChange={(e) => setForm({ ...form, name: e.target.value })} />
      </label>
      <label>
        Mode
        <select value={mode} onChange={(e) => setMode(e.target.value as "test" | "live")}>
          <option value="test">test (sk_test_: checked and priced, nothing spent)</option>
          <option value="live">live (sk_live_: spends the org's credits)</option>
        </select>
      </label>
      <AgentFields form={form} setForm={setForm} serverError={create.error} />
      <div className="actions">
        <button type="submit" disabled={create.isPending}>{create.isPending ? "Creating…" : "Create agent"}</button>
      </div>
      {allowlistProblemOf(create.error) === null ? <ErrorNotice error={create.error} /> : null}
    </form>
  )
}

type AgentRecord = {
  readonly id: string
  readonly name: string
  readonly mode: "test" | "live"
  readonly status: "active" | "disabled"
  readonly monthly_budget: { readonly credits: string; readonly usd: string }
  readonly approval_threshold: { readonly credits: string; readonly usd: string } | null
  readonly ip_allowlist: ReadonlyArray<string>
  readonly key_prefix: string | null
  readonly key_last_used_at: string | null
}

const EditAgent = (
  { orgId, agent, onClose }: { readonly orgId: string; readonly agent: AgentRecord; readonly onClose: () => void }
) => {
  const [form, setForm] = useState<AgentForm>({
    name: agent.name,
    budget: agent.monthly_budget.credits,
    threshold: agent.approval_threshold?.credits ?? "",
    allowlist: agent.ip_allowlist.join(", ")
  })
  const update = useApiMutation(
    (c, value: AgentForm) =>
      c.agents.update({
        path: { orgId, agentId: agent.id },
        payload: agentPayload(value)
      }),
    [["agents", orgId]]
  )
  const problems = formProblems(form)
  return (
    <form
      className="form-grid edit"
      aria-label={`Edit ${agent.name}`}
      onSubmit={(event) => {
        event.preventDefault()
        if (problems.budget !== null || problems.threshold !== null) return
        update.mutate(form, { onSuccess: onClose })
      }}
    >
      <label>
        Name
        <input required value={form.name} onChange={(e) => setForm({ ...form, name: e.target.value })} />
      </label>
      <AgentFields form={form} setForm={setForm} serverError={update.error} />
      <div className="actions">
        <button type="submit" disabled={update.isPending}>Save</button>
        <button type="button" className="secondary" onClick={onClose}>Cancel</button>
      </div>
      {allowlistProblemOf(update.error) === null ? <ErrorNotice error={update.error} /> : null}
    </form>
  )
}

const AgentRow = ({ orgId, agent, spent, onKey }: {
  readonly orgId: string
  readonly agent: AgentRecord
  readonly spent: number
  readonly onKey: (key: ShownSecret) => void
}) => {
  const [editing, setEditing] = useState(false)
  const invalidate = [["agents", orgId]] as const
  const rotate = useApiMutation((c) => c.agents.rotateKey({ path: { orgId, agentId: agent.id } }), invalidate)
  const revoke = useApiMutation((c) => c.agents.revokeKey({ path: { orgId, agentId: agent.id } }), invalidate)
  const setStatus = useApiMutation(
    (c, status: "active" | "disabled") => c.agents.update({ path: { orgId, agentId: agent.id }, payload: { status } }),
    invalidate
  )
  const budget = Number(agent.monthly_budget.credits)
  return (
    <li className="card agent" data-testid={`agent-${agent.name}`}>
      <div className="agent-head">
        <h3>{agent.name}</h3>
        <Status value={agent.mode} />
        <Status value={agent.status} />
        <span className="muted">
          {agent.key_prefix === null ? "no key (revoked)" : (
            <>
              key <code>{agent.key_prefix}…</code>, last used <When at={agent.key_last_used_at} />
            </>
          )}
        </span>
      </div>
      <RowChart
        label={`${agent.name}: spend this month against its budget`}
        max={budget}
        bars={[{
          label: "This month",
          value: spent,
          title: `${spent.toLocaleString("en-US")} of ${budget.toLocaleString("en-US")} cr`
        }]}
      />
      <p className="muted">
        Budget <Credits amount={agent.monthly_budget} />
        {agent.approval_threshold === null ? ", no approval threshold" : (
          <>
            , approval above <Credits amount={agent.approval_threshold} />
          </>
        )}
        {agent.ip_allowlist.length === 0 ? ", any address" : `, from ${agent.ip_allowlist.join(", ")}`}
      </p>
      {editing ? <EditAgent orgId={orgId} agent={agent} onClose={() => setEditing(false)} /> : (
        <div className="actions">
          <button type="button" className="secondary" onClick={() => setEditing(true)}>Edit</button>
          <button
            type="button"
            className="secondary"
            onClick={() =>
              rotate.mutate(undefined, {
                onSuccess: (made) => onKey({ title: `Key of ${agent.name}`, secret: made.key, note: made.key_note })
              })}
          >
            {agent.key_prefix === null ? "Issue key" : "Rotate key"}
          </button>
          {agent.key_prefix === null ?
            null :
            (
              <button
                type="button"
                className="danger"
                onClick={() =>
                  confirm(`Revoke the key of ${agent.name}? Calls with it stop at once.`) && revoke.mutate(undefined)}
              >
                Revoke key
              </button>
            )}
          <button
            type="button"
            className="secondary"
            onClick={() => setStatus.mutate(agent.status === "active" ? "disabled" : "active")}
          >
            {agent.status === "active" ? "Disable" : "Enable"}
          </button>
        </div>
      )}
      <ErrorNotice error={rotate.error ?? revoke.error ?? setStatus.error} />
      <ConnectedClients orgId={orgId} agentId={agent.id} agentName={agent.name} />
    </li>
  )
}

/** Agents: mode, status, budget and this month's spend; create, rotate, revoke, disable, edit. */
export const AgentsPage = () => {
  const org = useOrg()
  const agents = useApiQuery(
    ["agents", org.id],
    (c) => c.agents.list({ path: { orgId: org.id }, urlParams: { limit: 200 } })
  )
  const usage = useApiQuery(["usage", org.id], (c) => c.usage.get({ path: { orgId: org.id }, urlParams: {} }))
  const shownKey = useSecretOnce(KEY_SHOWN_MS)
  const spentBy = new Map((usage.data?.by_agent ?? []).map((row) => [row.agent_id, Number(row.spend.credits)]))
  return (
    <div className="stack">
      <h1>Agents</h1>
      {shownKey.view}
      <NewAgent orgId={org.id} onKey={shownKey.show} />
      <Loaded query={agents}>
        {(data) =>
          data.agents.length === 0 ? <Empty>No agents yet.</Empty> : (
            <ul className="plain stack">
              {data.agents.map((agent) => (
                <AgentRow
                  key={agent.id}
                  orgId={org.id}
                  agent={agent}
                  spent={spentBy.get(agent.id) ?? 0}
                  onKey={shownKey.show}
                />
              ))}
            </ul>
          )}
      </Loaded>
    </div>
  )
}
