import { amountOf } from "@agent-gateway/contract/Domain/Money.js"
import { useSearchParams } from "react-router"
import { useApiMutation, useApiQuery } from "../api/hooks.js"
import { Countdown, Credits, ErrorNotice, Loaded, Status } from "../components/ui.js"

/**
 * Where the approval mail's one-click links land: the purchase and one button. The link's
 * token is the credential (no sign-in needed); each link works once.
 */
export const ApprovalLinkPage = () => {
  const [search] = useSearchParams()
  const token = search.get("token") ?? ""
  const preview = useApiQuery(["approval-link", token], (c) => c.approvalLinks.preview({ path: { token } }))
  // A link works once: after it, the page shows the decided approval the answer carries.
  const decide = useApiMutation((c) => c.approvalLinks.decision({ path: { token } }))
  return (
    <main id="main" tabIndex={-1} className="center">
      <Loaded query={preview}>
        {({ agent, approval: shown, decision }) => {
          const approval = decide.data?.approval ?? shown
          return (
            <div className="card stack narrow">
              <h1>
                {approval.status === "waiting"
                  ? `${decision === "approve" ? "Approve" : "Reject"} this purchase?`
                  : `This purchase is ${approval.status}`}
              </h1>
              <dl>
                <dt>Agent</dt>
                <dd data-testid="approval-agent">
                  {agent.name} <Status value={agent.mode} />{" "}
                  <span className="muted">
                    {agent.mode === "live" ? "spends the org's credits" : "test: no credits move"}
                  </span>
                </dd>
                <dt>Tool</dt>
                <dd>{approval.tool.name}</dd>
                <dt>Items</dt>
                <dd>{approval.item_count}</dd>
                <dt>Amount</dt>
                <dd>
                  up to <Credits amount={amountOf(approval.amount_credits)} />
                </dd>
                <dt>Why</dt>
                <dd>
                  {approval.reason === "over_budget"
                    ? "over the agent's monthly budget"
                    : "above the agent's approval threshold"}
                </dd>
                <dt>Status</dt>
                <dd>
                  <Status value={approval.status} />
                </dd>
                {approval.status === "waiting"
                  ? (
                    <>
                      <dt>Expires in</dt>
                      <dd>
                        <Countdown until={approval.expires_at.toISOString()} />
                      </dd>
                    </>
                  )
                  : null}
              </dl>
              {approval.status === "waiting"
                ? (
                  <button
                    type="button"
                    className={decision === "reject" ? "danger" : ""}
                    disabled={decide.isPending}
                    onClick={() => decide.mutate(undefined)}
                  >
                    {decision === "approve" ? "Approve" : "Reject"}
                  </button>
                )
                : (
                  <p>
                    The agent can retry its purchase with approval id <code>{approval.id}</code>.
                  </p>
                )}
              <ErrorNotice error={decide.error} />
            </div>
          )
        }}
      </Loaded>
    </main>
  )
}
