import type { EmailedEventType, EventData } from "../../Domain/Events.js"
import { eventTitle } from "../../Domain/EventTitles.js"
import { escapeHtml } from "../../Domain/Html.js"
import { creditsText, creditsToDollars } from "../../Domain/Money.js"
import { utcDate } from "./MailDates.js"

/**
 * The mails owners receive for the events marked "emailed to owners": what happened and
 * what to do about it, as plain text and HTML with the same content.
 */
export interface OwnerMailContext {
  readonly orgId: string
  readonly orgName: string
  readonly baseUrl: string
  /** The dashboard's address (`<public URL><DASHBOARD_PATH>`), where an owner acts on the mail. */
  readonly dashboardUrl: string
  readonly eventId: string
}

export interface RenderedMail {
  readonly subject: string
  readonly text: string
  readonly html: string
}

interface Content {
  readonly subject: string
  readonly headline: string
  readonly happened: ReadonlyArray<string>
  readonly todo: ReadonlyArray<string>
}

const usd = (credits: string) => creditsToDollars(BigInt(credits))
/** "22,500 credits ($22.50)" */
const amount = (credits: string) => `${creditsText(BigInt(credits))} credits (${usd(credits)})`
const day = utcDate

type Renderers = { readonly [T in EmailedEventType]: (data: EventData<T>, context: OwnerMailContext) => Content }

const renderers: Renderers = {
  "balance.low": (data, { dashboardUrl, orgId }) => ({
    subject: `Credit balance low: ${usd(data.balance_credits)} left`,
    headline: "Your credit balance is low",
    happened: [
      `The org's balance has fallen under its low-balance alert: ${amount(data.balance_credits)} are left.`,
      "When the balance cannot cover a purchase or a call, agents' purchases and gateway calls are refused until the org is topped up."
    ],
    todo: [
      `Top up the org's credits so agents can keep buying: ${dashboardUrl}/orgs/${orgId}/billing`,
      `To change when this alert is sent, set its amount under Settings in the dashboard: ${dashboardUrl}/orgs/${orgId}/settings`
    ]
  }),
  "budget.80pct": (data, { dashboardUrl, orgId }) => ({
    subject: `Agent "${data.agent_name}" has used 80% of its monthly budget`,
    headline: "An agent is close to its monthly budget",
    happened: [
      `Agent "${data.agent_name}" (${data.agent_id}) has spent ${amount(data.spent_credits)} of its monthly budget of ${
        amount(data.budget_credits)
      }.`,
      "Purchases and calls past the budget are refused, or wait for an owner's approval."
    ],
    todo: [
      `If the agent needs more this month, raise its monthly budget on the Agents page of the dashboard: ${dashboardUrl}/orgs/${orgId}/agents`,
      "Otherwise nothing is needed: the budget resets at the start of the next calendar month (UTC)."
    ]
  }),
  "tool.paused": (data, { dashboardUrl, orgId }) => ({
    subject: `Tool paused: ${data.tool_name}`,
    headline: "A tool your agents use was paused",
    happened: [
      `${data.tool_name} (${data.tool_id}) was paused: ${data.reason}`,
      "Purchases of this tool are refused until it is resumed."
    ],
    todo: [
      `Pick another tool for the same task type (the Tools page of the dashboard ranks them: ${dashboardUrl}/orgs/${orgId}/tools), or let your agents ask for a fallback so the service may use another tool.`
    ]
  }),
  "dispute.decided": (data) => ({
    subject: `Dispute ${data.decision}: ${amount(data.refunded_credits)} refunded`,
    headline: `Your dispute was ${data.decision}`,
    happened: [
      `The dispute ${data.dispute_id} on item ${data.item_index} of receipt ${data.receipt_id} was ${data.decision}.`,
      `${amount(data.refunded_credits)} were refunded to the org.`,
      ...(data.note === null || data.note === "" ? [] : [`Note from the reviewer: ${data.note}`])
    ],
    todo: [
      data.decision === "upheld"
        ? "Nothing more is needed; the refund is already on the org's balance."
        : "Nothing is needed; if you disagree, reply with what the result got wrong."
    ]
  }),
  "price.changed": (data, { dashboardUrl, orgId }) => ({
    subject: `Price change for ${data.tool_name}`,
    headline: "A tool your agents use changed its price",
    happened: [
      `The price per success of ${data.tool_name} (${data.tool_id}) changes from ${amount(data.old_credits)} to ${
        amount(data.new_credits)
      } from ${day(data.valid_from)}.`
    ],
    todo: [
      `Check the most your agents are set to pay and their monthly budgets; compare tools on the Tools page of the dashboard: ${dashboardUrl}/orgs/${orgId}/tools`
    ]
  }),
  "trial.expiring": (data) => ({
    subject: `Your trial credits expire on ${day(data.expires_on)}`,
    headline: "Trial credits expire soon",
    happened: [
      `${amount(data.credits).replace(" credits", " trial credits")} expire on ${day(data.expires_on)} (UTC) if unused.`
    ],
    todo: ["Top up the org's credits to keep buying after the trial credits expire."]
  })
}

export const renderOwnerMail = <T extends EmailedEventType>(
  type: T,
  data: EventData<T>,
  context: OwnerMailContext
): RenderedMail => {
  const content = (renderers[type] as (d: EventData<T>, c: OwnerMailContext) => Content)(data, context)
  const subject = `[${context.orgName}] ${content.subject}`
  const footer = `Org: ${context.orgName} (${context.orgId}) · ${eventTitle(type)} (event ${context.eventId})`
  const text = [
    content.headline,
    "",
    "What happened",
    ...content.happened.map((line) => `- ${line}`),
    "",
    "What to do",
    ...content.todo.map((line) => `- ${line}`),
    "",
    `API reference: ${context.baseUrl}/docs`,
    footer,
    "You receive this mail because you are an owner of this org."
  ].join("\n")
  const list = (lines: ReadonlyArray<string>) =>
    `<ul>${lines.map((line) => `<li>${escapeHtml(line)}</li>`).join("")}</ul>`
  const html = [
    "<!doctype html><html><body style=\"font-family:sans-serif;line-height:1.5\">",
    `<h2>${escapeHtml(content.headline)}</h2>`,
    "<h3>What happened</h3>",
    list(content.happened),
    "<h3>What to do</h3>",
    list(content.todo),
    `<p><a href="${escapeHtml(`${context.baseUrl}/docs`)}">API reference</a></p>`,
    `<p style="color:#666;font-size:12px">${
      escapeHtml(footer)
    }<br>You receive this mail because you are an owner of this org.</p>`,
    "</body></html>"
  ].join("")
  return { subject, text, html }
}
