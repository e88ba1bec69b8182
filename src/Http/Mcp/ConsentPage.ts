import { HttpServerResponse } from "@effect/platform"
import type { Agent } from "../../Domain/Agent.js"
import { escapeHtml } from "../../Domain/Html.js"
import { creditsToDollars } from "../../Domain/Money.js"
import { agentDefaults } from "../../Services/Agents/Agents.js"
import { OAUTH_PREFIX } from "../../Services/OAuth/AuthorizationServer.js"
import { type DashboardLook, SERVICE_PAGE_CSP, servicePage } from "../Handlers/ServicePage.js"

/**
 * The pages of the OAuth consent step (Consent.ts): sign in by mailed link, then choose the
 * org and the agent the client may act as, or make a new agent with its budget and approval
 * threshold. Plain server-rendered forms posting to the same origin, in the dashboard's look
 * (ServicePage.ts); never framed.
 */
export type AgentChoice = Pick<
  Agent,
  "id" | "name" | "mode" | "status" | "monthly_budget_credits" | "approval_threshold_credits"
>

export interface OrgChoice {
  readonly id: string
  readonly name: string
  readonly agents: ReadonlyArray<AgentChoice>
}

/** The client as the owner is shown it: its name, and for a client named by its metadata document's URL, that site. */
export interface ClientShown {
  readonly name: string
  readonly site: string | undefined
}

/** Credits as the dashboard writes them: "50,000 cr ($50.00)". */
export const creditsText = (amount: bigint) => `${amount.toLocaleString("en-US")} cr (${creditsToDollars(amount)})`

/** The interaction's page, by path (its forms are also shown at /verify, so nothing is relative). */
const interactionPath = (uid: string) => escapeHtml(`${OAUTH_PREFIX}/interaction/${encodeURIComponent(uid)}`)

const clientLine = (client: ClientShown) =>
  `<p><strong>${escapeHtml(client.name)}</strong>${
    client.site === undefined ? "" : ` (published at ${escapeHtml(client.site)})`
  } asks to use this service.</p>`

const problemLine = (problem: string | undefined) =>
  problem === undefined ? "" : `<p class="error" role="alert">${escapeHtml(problem)}</p>`

const agentLine = (agent: AgentChoice) =>
  `${escapeHtml(agent.name)} (${agent.mode}; budget ${creditsText(agent.monthly_budget_credits)} a month; ${
    agent.approval_threshold_credits === null
      ? "never asks for approval"
      : `approval above ${creditsText(agent.approval_threshold_credits)}`
  })`

/** The consent step's pages, in the dashboard's look. */
export const consentPages = (look: DashboardLook) => {
  const page = (title: string, body: string, status = 200) =>
    HttpServerResponse.html(servicePage(look, {
      title,
      layout: "card",
      head: `<meta name="referrer" content="same-origin"><meta name="robots" content="noindex">\n`,
      body: `<h1>${escapeHtml(title)}</h1>${body}`
    })).pipe(
      HttpServerResponse.setStatus(status),
      HttpServerResponse.setHeaders({
        "cache-control": "no-store",
        // same-origin, not no-referrer: with no-referrer a browser sends `Origin: null` on the
        // forms' posts, and the consent step accepts only posts that carry this site's origin.
        "referrer-policy": "same-origin",
        "x-frame-options": "DENY",
        "content-security-policy": SERVICE_PAGE_CSP
      })
    )

  const signInPage = (uid: string, client: ClientShown, problem?: string) =>
    page(
      "Sign in to connect",
      `${clientLine(client)}${problemLine(problem)}
<p>Sign in as an org owner: we mail you a link. Open it in this browser: it signs you in and brings you back
to this step, to choose the agent the client acts as.</p>
<form method="post" action="${interactionPath(uid)}/sign-in" class="stack">
<label>Email address <input type="email" name="email" required autocomplete="email"></label>
<div class="actions"><button type="submit">Mail me a sign-in link</button></div></form>`,
      problem === undefined ? 200 : 400
    )

  const mailSentPage = (uid: string, email: string) =>
    page(
      "Check your mail",
      `<p class="notice" role="status">We sent a sign-in link to <b>${
        escapeHtml(email)
      }</b>. It works once, for 15 minutes.</p>
<p>Open it in this browser, in this tab or another: it signs you in and brings you back to this step.</p>
<p>Signed in already, in another tab? <a href="${interactionPath(uid)}">Continue</a></p>`
    )

  /** A mailed link opened where the request it belongs to is not (another browser), or after it ended. */
  const otherBrowserPage = () =>
    page(
      "Open the link where you started",
      `<p>This sign-in link belongs to a connection request of another browser, or one that has ended. Open it in
the browser where your MCP client sent you to sign in, or start connecting again from your MCP client.</p>`,
      400
    )

  const consentPage = (
    uid: string,
    client: ClientShown,
    email: string,
    orgs: ReadonlyArray<OrgChoice>,
    problem?: string
  ) =>
    page(
      "Connect an agent",
      `${clientLine(client)}${problemLine(problem)}
<p>Signed in as ${escapeHtml(email)}. Choose the agent it acts as: it spends that agent's credits within that
agent's mode, monthly budget, approval threshold, allowlist and rate limits, and never more.
You can disconnect it from the agent's page at any time.</p>
${
        orgs.length === 0
          ? `<p>You own no org yet: <a href="${escapeHtml(look.home)}">create one on the dashboard</a> first.</p>`
          : `<form method="post" action="${interactionPath(uid)}" class="stack">
${
            orgs.map((org) =>
              `<fieldset class="stack"><legend>${escapeHtml(org.name)}</legend>
${
                org.agents.filter((agent) => agent.status === "active").map((agent) =>
                  `<label class="check"><input type="radio" name="choice" value="${
                    escapeHtml(`${org.id}:${agent.id}`)
                  }" required> ${agentLine(agent)}</label>`
                ).join("\n")
              }
<label class="check"><input type="radio" name="choice" value="${
                escapeHtml(`${org.id}:new`)
              }" required> A new agent in ${escapeHtml(org.name)}</label></fieldset>`
            ).join("\n")
          }
<fieldset class="stack"><legend>A new agent</legend>
<label>Name <input type="text" name="name" maxlength="80" value="${escapeHtml(client.name.slice(0, 80))}"></label>
<label>Mode <select name="mode"><option value="test">test: prices without spending</option>
<option value="live">live: spends credits</option></select></label>
<label>Monthly budget (credits) <input type="number" name="monthly_budget" min="0" step="1" value="${agentDefaults.monthlyBudgetCredits}" aria-describedby="budget-hint">
<span class="hint" id="budget-hint">The default: ${
            creditsText(agentDefaults.monthlyBudgetCredits)
          } of purchases a calendar month (UTC).</span></label>
<label>Ask for approval above (credits; empty: never) <input type="number" name="approval_threshold" min="0" step="1" value="${agentDefaults.approvalThresholdCredits}" aria-describedby="threshold-hint">
<span class="hint" id="threshold-hint">The default: a purchase above ${
            creditsText(agentDefaults.approvalThresholdCredits)
          } waits for an owner's approval.</span></label>
</fieldset>
<div class="actions"><button type="submit" name="decision" value="allow">Allow</button>
<button type="submit" name="decision" value="deny" class="secondary" formnovalidate>Deny</button></div>
</form>`
      }`,
      problem === undefined ? 200 : 400
    )

  return { page, signInPage, mailSentPage, otherBrowserPage, consentPage } as const
}

export type ConsentPages = ReturnType<typeof consentPages>
