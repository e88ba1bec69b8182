import { escapeHtml } from "../../Domain/Html.js"
import { creditsText, creditsToDollars } from "../../Domain/Money.js"
import { utcDateTime } from "./MailDates.js"
import type { RenderedMail } from "./OwnerMail.js"

/**
 * The mail each owner receives when a purchase waits for approval: what the agent wants,
 * why it needs an owner, and two one-click links (approve, reject) made for that owner.
 */
export interface ApprovalMailContent {
  readonly agentName: string
  readonly toolName: string
  readonly itemCount: number
  readonly amount: bigint
  readonly reason: "over_threshold" | "over_budget"
  readonly approvalId: string
  readonly expiresAt: Date
  readonly links: { readonly approve: string; readonly reject: string }
}

export const approvalRequestMail = (mail: ApprovalMailContent): RenderedMail => {
  const usd = creditsToDollars(mail.amount)
  const credits = creditsText(mail.amount)
  const results = `${mail.itemCount} result${mail.itemCount === 1 ? "" : "s"}`
  const why = mail.reason === "over_budget"
    ? "it would take the agent over its monthly budget"
    : "it is above the agent's approval threshold"
  const expiry = `Each link opens a page with one button and works once. The request expires on ${
    utcDateTime(mail.expiresAt)
  }.`
  const text = [
    `The agent "${mail.agentName}" wants to buy ${results} from ${mail.toolName} for up to ${credits} credits (${usd}).`,
    `It needs an owner's approval because ${why}.`,
    "",
    `Approve: ${mail.links.approve}`,
    `Reject:  ${mail.links.reject}`,
    "",
    expiry,
    `Approval id: ${mail.approvalId}`
  ].join("\n")
  const html = `<p>The agent <b>${escapeHtml(mail.agentName)}</b> wants to buy ${results} from <b>${
    escapeHtml(mail.toolName)
  }</b> for up to ${credits} credits (${usd}).</p>
<p>It needs an owner's approval because ${why}.</p>
<p><a href="${escapeHtml(mail.links.approve)}">Approve</a> &nbsp; <a href="${
    escapeHtml(mail.links.reject)
  }">Reject</a></p>
<p>${expiry}</p>`
  return { subject: `Approve a purchase of ${usd} by ${mail.agentName}?`, text, html }
}
