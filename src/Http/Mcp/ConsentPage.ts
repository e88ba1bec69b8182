import { HttpServerResponse } from "@effect/platform"
import type { Agent } from "../../Domain/Agent.js"
import { escapeHtml } from "../../Domain/Html.js"
import { creditsToUsd } from "../../Domain/Money.js"

/**
 * The pages of the OAuth consent step (Consent.ts): sign in by mailed link, then choose the
 * org and the agent the client may act as, or make a new agent with its budget and approval
 * threshold. Plain server-rendered forms posting to the same origin; never framed.
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

export const page = (title: string, body: string, status = 200) =>
  HttpServerResponse.html(`<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="referrer" content="same-origin"><meta name="robots" content="noindex">
<title>${escapeHtml(title)}</title>
<style>body{font-family:system-ui,sans-serif;max-width:38rem;margin:3rem auto;padding:0 1rem;line-height:1.5}
fieldset{margin:1rem 0;border:1px solid #ccc;border-radius:.4rem}label{display:block;margin:.3rem 0}
input[type=text],input[type=email],input[type=number],select{font-size:1rem;padding:.3rem}
button{font-size:1.05rem;padding:.5rem 1.2rem;cursor:pointer;margin-right:.6rem}.error{color:#a00}</style></head>
<body><h1>${escapeHtml(title)}</h1>${body}</body></html>`).pipe(
    HttpServerResponse.setStatus(status),
    HttpServerResponse.setHeaders({
      "cache-control": "no-store",
      // same-origin, not no-referrer: with no-referrer a browser sends `Origin: null` on the
      // forms' posts, and the consent step accepts only posts that carry this site's origin.
      "referrer-policy": "same-origin",
      "x-frame-options": "DENY",
      "content-security-policy": "default-src 'none'; style-src 'unsafe-inline'; frame-ancestors 'none'"
    })
  )

/** The client as the owner is shown it: its name, and for a client named by its metadata document's URL, that site. */
export interface ClientShown {
  readonly name: string
  readonly site: string | undefined
}

const clientLine = (client: ClientShown) =>
  `<p><strong>${escapeHtml(client.name)}</strong>${
    client.site === undefined ? "" : ` (published at ${escapeHtml(client.site)})`
  } asks to use this service.</p>`

const problemLine = (problem: string | undefined) =>
  problem === undefined ? "" : `<p class="error" role="alert">${escapeHtml(problem)}</p>`

export const signInPage = (uid: string, client: ClientShown, problem?: string) =>
  page(
    "Sign in to connect",
    `${clientLine(client)}${problemLine(problem)}
<p>Sign in as an org owner: we mail you a link. Open it in this browser, then come back to this page.</p>
<form method="post" action="${escapeHtml(uid)}/sign-in">
<label>Email address <input type="email" name="email" required autocomplete="email"></label>
<button type="submit">Mail me a sign-in link</button></form>`,
    problem === undefined ? 200 : 400
  )

export const mailSentPage = (uid: string, email: string) =>
  page(
    "Check your mail",
    `<p>We sent a sign-in link to ${escapeHtml(email)}. Open it in this browser, then continue here.</p>
<p><a href="../${escapeHtml(uid)}">Continue</a></p>`
  )

const credits = (amount: bigint | null) =>
  amount === null ? "no approvals" : `${amount} credits ($${creditsToUsd(amount)})`

const agentLine = (agent: AgentChoice) =>
  `${escapeHtml(agent.name)} (${agent.mode}; budget ${credits(agent.monthly_budget_credits)} a month; approval above ${
    credits(agent.approval_threshold_credits)
  })`

export const consentPage = (
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
        ? "<p>You own no org yet: create one on the dashboard first.</p>"
        : `<form method="post" action="${escapeHtml(uid)}">
${
          orgs.map((org) =>
            `<fieldset><legend>${escapeHtml(org.name)}</legend>
${
              org.agents.filter((agent) => agent.status === "active").map((agent) =>
                `<label><input type="radio" name="choice" value="${escapeHtml(`${org.id}:${agent.id}`)}" required> ${
                  agentLine(agent)
                }</label>`
              ).join("\n")
            }
<label><input type="radio" name="choice" value="${escapeHtml(`${org.id}:new`)}" required> A new agent in ${
              escapeHtml(org.name)
            }</label></fieldset>`
          ).join("\n")
        }
<fieldset><legend>A new agent</legend>
<label>Name <input type="text" name="name" maxlength="80" value="${escapeHtml(client.name.slice(0, 80))}"></label>
<label>Mode <select name="mode"><option value="test">test: prices without spending</option>
<option value="live">live: spends credits</option></select></label>
<label>Monthly budget (credits) <input type="number" name="monthly_budget" min="0" step="1" value="10000"></label>
<label>Ask for approval above (credits; empty: never) <input type="number" name="approval_threshold" min="0" step="1" value="1000"></label>
</fieldset>
<button type="submit" name="decision" value="allow">Allow</button>
<button type="submit" name="decision" value="deny" formnovalidate>Deny</button>
</form>`
    }`,
    problem === undefined ? 200 : 400
  )
