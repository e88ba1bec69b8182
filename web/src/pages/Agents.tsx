import type { Agent } from "@agent-gateway/contract/Domain/Agent.js"
import type { AgentRefusal } from "@agent-gateway/contract/Domain/AgentRefusal.js"
import type { OrgId } from "@agent-gateway/contract/Domain/Ids.js"
import { amountOf } from "@agent-gateway/contract/Domain/Money.js"
import type { OrgUsage } from "@agent-gateway/contract/Http/Groups/UsageGroup.js"
import { useState } from "react"
import { isApiError } from "../api/client.js"
import { useApiMutation, useApiQuery } from "../api/hooks.js"
import { useOrg } from "../api/org.js"
import { RowChart } from "../components/Charts.js"
import { ConnectedClients } from "../components/ConnectedClients.js"
import { credits, creditsInDollars, dollars, utcDay } from "../components/format.js"
import { refusalOf } from "../components/refusals.js"
import {
  AGENT_KEY_NOTE,
  Credits,
  Empty,
  ErrorNotice,
  LiveClosedNotice,
  Loaded,
  type ShownSecret,
  Status,
  useSecretOnce,
  When
} from "../components/ui.js"

/** The spec: a new agent key is shown in the dashboard for 2 minutes. */
const KEY_SHOWN_MS = 2 * 60 * 1000

const wholeCredits = /^\d{1,18}$/

/**
 * The API's defaults for a new agent (the spec's Agent record, Services/Agents agentDefaults):
 * the form starts from them, and an emptied field means them again, never 0 or "never ask".
 */
export const AGENT_DEFAULTS = { budget: "50000", threshold: "20000" } as const

interface AgentForm {
  readonly name: string
  readonly budget: string
  readonly threshold: string
  /** Every purchase goes ahead without asking (the API's null threshold), chosen on purpose. */
  readonly neverAsk: boolean
  readonly allowlist: string
}

const blankForm: AgentForm = {
  name: "",
  budget: AGENT_DEFAULTS.budget,
  threshold: AGENT_DEFAULTS.threshold,
  neverAsk: false,
  allowlist: ""
}

const allowlistOf = (text: string) =>
  text.split(/[\s,]+/).map((entry) => entry.trim()).filter((entry) => entry.length > 0)

/** The form's fields as the API takes them, for creating and for editing; empty numbers are the defaults. */
const agentPayload = (form: AgentForm) => ({
  name: form.name,
  monthly_budget_credits: BigInt(form.budget.trim() || AGENT_DEFAULTS.budget),
  approval_threshold_credits: form.neverAsk ? null : BigInt(form.threshold.trim() || AGENT_DEFAULTS.threshold),
  ip_allowlist: allowlistOf(form.allowlist)
})

/** What a number of credits is in money, under its field. */
const inMoney = (text: string, fallback: string) => {
  const value = text.trim() === "" ? fallback : text.trim()
  return wholeCredits.test(value) ? creditsInDollars(value) : null
}

/** The service names the allowlist entry it refused: that message belongs under the field. */
const allowlistProblemOf = (error: unknown) =>
  isApiError(error, "invalid_input") && /allowlist|address|range/i.test(error.message) ? error.message : null

/** Inline problems with the numbers, before anything is sent. */
const formProblems = (form: AgentForm) => ({
  budget: form.budget.trim() === "" || wholeCredits.test(form.budget.trim()) ? null : "Whole credits: digits only",
  threshold: form.neverAsk || form.threshold.trim() === "" || wholeCredits.test(form.threshold.trim())
    ? null
    : "Whole credits: digits only"
})

const AgentFields = ({ idPrefix, form, setForm, serverError }: {
  readonly idPrefix: string
  readonly form: AgentForm
  readonly setForm: (form: AgentForm) => void
  readonly serverError: unknown
}) => {
  const problems = formProblems(form)
  const allowlistProblem = allowlistProblemOf(serverError)
  const budgetMoney = inMoney(form.budget, AGENT_DEFAULTS.budget)
  const thresholdMoney = inMoney(form.threshold, AGENT_DEFAULTS.threshold)
  return (
    <>
      <label>
        Monthly budget (credits)
        <input
          inputMode="numeric"
          value={form.budget}
          placeholder={AGENT_DEFAULTS.budget}
          onChange={(e) => setForm({ ...form, budget: e.target.value })}
          aria-invalid={problems.budget !== null}
          aria-describedby={`${idPrefix}-budget-hint`}
        />
        {problems.budget ?
          <span className="field-error">{problems.budget}</span> :
          (
            <span className="hint" id={`${idPrefix}-budget-hint`}>
              At most {budgetMoney} of purchases a calendar month (UTC). Empty: the default,{" "}
              {credits(AGENT_DEFAULTS.budget)} credits ({creditsInDollars(AGENT_DEFAULTS.budget)}).
            </span>
          )}
      </label>
      <label>
        Approval threshold (credits)
        <input
          inputMode="numeric"
          value={form.neverAsk ? "" : form.threshold}
          placeholder={form.neverAsk ? "never asks" : AGENT_DEFAULTS.threshold}
          disabled={form.neverAsk}
          onChange={(e) => setForm({ ...form, threshold: e.target.value })}
          aria-invalid={problems.threshold !== null}
          aria-describedby={`${idPrefix}-threshold-hint`}
        />
        {problems.threshold ?
          <span className="field-error">{problems.threshold}</span> :
          (
            <span className="hint" id={`${idPrefix}-threshold-hint`}>
              {form.neverAsk
                ? "Every purchase goes ahead without an owner's approval."
                : `A purchase above ${thresholdMoney} waits for an owner's approval. Empty: the default, ${
                  credits(AGENT_DEFAULTS.threshold)
                } credits (${creditsInDollars(AGENT_DEFAULTS.threshold)}).`}
            </span>
          )}
      </label>
      <label className="check">
        <input
          type="checkbox"
          checked={form.neverAsk}
          onChange={(e) => setForm({ ...form, neverAsk: e.target.checked })}
        />{" "}
        Never ask for approval
      </label>
      <label>
        IP allowlist
        <input
          value={form.allowlist}
          onChange={(e) => setForm({ ...form, allowlist: e.target.value })}
          aria-invalid={allowlistProblem !== null}
          aria-describedby={`${idPrefix}-allowlist-hint`}
        />
        {allowlistProblem ?
          <span className="field-error" role="alert">{allowlistProblem}</span> :
          (
            <span className="hint" id={`${idPrefix}-allowlist-hint`}>
              Addresses or ranges, comma separated. Empty: any address.
            </span>
          )}
      </label>
    </>
  )
}

const NewAgent = (
  { orgId, liveOpen, onKey }: {
    readonly orgId: OrgId
    readonly liveOpen: boolean
    readonly onKey: (key: ShownSecret) => void
  }
) => {
  const [form, setForm] = useState<AgentForm>(blankForm)
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
            onKey({ title: `Key of ${created.agent.name}`, secret: created.key, note: AGENT_KEY_NOTE })
            setForm(blankForm)
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
          <option value="test">Test: no credits move</option>
          <option value="live">
            {liveOpen ? "Live: spends credits" : "Live: spends credits (purchases closed for now)"}
          </option>
        </select>
        <span className="hint">
          {mode === "test"
            ? "Purchases and calls are priced and checked like live ones, against sample results."
            : "Purchases and calls spend the org's credits."}
        </span>
      </label>
      {mode === "live" && !liveOpen ? <LiveClosedNotice /> : null}
      <AgentFields idPrefix="new-agent" form={form} setForm={setForm} serverError={create.error} />
      <div className="actions">
        <button type="submit" disabled={create.isPending}>{create.isPending ? "Creating…" : "Create agent"}</button>
      </div>
      {allowlistProblemOf(create.error) === null ? <ErrorNotice error={create.error} /> : null}
    </form>
  )
}

type AgentRecord = typeof Agent.json.Type

const EditAgent = (
  { orgId, agent, onClose }: { readonly orgId: OrgId; readonly agent: AgentRecord; readonly onClose: () => void }
) => {
  const [form, setForm] = useState<AgentForm>({
    name: agent.name,
    budget: agent.monthly_budget_credits.toString(),
    threshold: agent.approval_threshold_credits?.toString() ?? AGENT_DEFAULTS.threshold,
    neverAsk: agent.approval_threshold_credits === null,
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
      <AgentFields idPrefix={`edit-${agent.id}`} form={form} setForm={setForm} serverError={update.error} />
      <div className="actions">
        <button type="submit" disabled={update.isPending}>Save</button>
        <button type="button" className="secondary" onClick={onClose}>Cancel</button>
      </div>
      {allowlistProblemOf(update.error) === null ? <ErrorNotice error={update.error} /> : null}
    </form>
  )
}

/** The agent's month against its budget (the usage answer's `budgets`). */
type BudgetUse = typeof OrgUsage.Type["budgets"][number]

/** At this share of its budget used the owner is warned, as the 80% mail does. */
const NEARLY_SPENT = 0.8

/**
 * What the agent has used of its budget this month, test agents too (their priced calls and
 * purchases count against it), and a warning once what is left is short: a purchase above it
 * waits for an owner's approval, a call above it is refused.
 */
const BudgetLine = ({ name, use }: { readonly name: string; readonly use: BudgetUse | undefined }) => {
  if (use === undefined) return null
  const spent = Number(use.spent.credits)
  const budget = Number(use.budget.credits)
  const nearlySpent = budget > 0 && spent >= budget * NEARLY_SPENT
  return (
    <>
      <RowChart
        label={`${name}: spend this month against its budget`}
        max={budget}
        bars={[{ label: "This month", value: spent, title: `${credits(spent)} of ${credits(budget)} cr` }]}
      />
      {nearlySpent ?
        (
          <p className="notice" role="status" data-testid="budget-warning">
            {use.remaining.credits === "0"
              ? `The monthly budget is used up: every purchase waits for an owner's approval and every call is refused until next month, or until you raise the budget (Edit).`
              : `Only ${credits(use.remaining.credits)} cr (${
                dollars(use.remaining.usd)
              }) left this month: a purchase above that waits for an owner's approval and a call above it is refused. Raise the budget (Edit) if the agent needs more.`}
          </p>
        ) :
        null}
    </>
  )
}

const AgentRow = ({ orgId, agent, budget, refusals, onKey }: {
  readonly orgId: OrgId
  readonly agent: AgentRecord
  readonly budget: BudgetUse | undefined
  readonly refusals: ReadonlyArray<RefusalRecord>
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
      <BudgetLine name={agent.name} use={budget} />
      <p className="muted">
        Budget <Credits amount={amountOf(agent.monthly_budget_credits)} />
        {agent.approval_threshold_credits === null ? ", never asks for approval" : (
          <>
            , approval above <Credits amount={amountOf(agent.approval_threshold_credits)} />
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
                onSuccess: (made) => onKey({ title: `Key of ${agent.name}`, secret: made.key, note: AGENT_KEY_NOTE })
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
      <AgentRefusals name={agent.name} refusals={refusals} />
      <ConnectedClients orgId={orgId} agentId={agent.id} agentName={agent.name} />
    </li>
  )
}

type RefusalRecord = typeof AgentRefusal.json.Type

/** The requests of the agent refused by a limit, latest first: what happened and what to do. */
const AgentRefusals = (
  { name, refusals }: { readonly name: string; readonly refusals: ReadonlyArray<RefusalRecord> }
) =>
  refusals.length === 0 ? null : (
    <section className="refusals" aria-label={`Refusals of ${name}`}>
      <h4>Refused this month</h4>
      <ul className="plain">
        {refusals.slice(0, 5).map((r) => {
          const help = refusalOf(r.code)
          return (
            <li key={`${r.day}/${r.code}`} data-code={r.code}>
              <b>{help.reason}</b> {r.count === 1 ?
                (
                  <>
                    Once, <When at={r.last_at} />
                  </>
                ) :
                (
                  <>
                    {r.count} times on {utcDay(r.day)} (UTC), last <When at={r.last_at} />
                  </>
                )}. <span className="todo">{help.todo}</span>
            </li>
          )
        })}
      </ul>
    </section>
  )

/** Agents: mode, status, budget and this month's spend; create, rotate, revoke, disable, edit. */
export const AgentsPage = () => {
  const org = useOrg()
  const agents = useApiQuery(
    ["agents", org.id],
    (c) => c.agents.list({ path: { orgId: org.id }, urlParams: { limit: 200 } })
  )
  // Refusals and spend change while the page is open.
  const usage = useApiQuery(["usage", org.id], (c) => c.usage.get({ path: { orgId: org.id }, urlParams: {} }), {
    refetchInterval: 5_000
  })
  const shownKey = useSecretOnce(KEY_SHOWN_MS)
  const budgetOf = new Map((usage.data?.budgets ?? []).map((row) => [row.agent_id, row]))
  return (
    <div className="stack">
      <h1>Agents</h1>
      {shownKey.view}
      <NewAgent orgId={org.id} liveOpen={usage.data?.live_purchases_open ?? true} onKey={shownKey.show} />
      <Loaded query={agents}>
        {(data) =>
          data.agents.length === 0 ? <Empty>No agents yet.</Empty> : (
            <ul className="plain stack">
              {data.agents.map((agent) => (
                <AgentRow
                  key={agent.id}
                  orgId={org.id}
                  agent={agent}
                  budget={budgetOf.get(agent.id)}
                  refusals={(usage.data?.refusals ?? []).filter((r) => r.agent_id === agent.id)}
                  onKey={shownKey.show}
                />
              ))}
            </ul>
          )}
      </Loaded>
    </div>
  )
}
