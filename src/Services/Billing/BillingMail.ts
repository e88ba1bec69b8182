import { Effect, Option } from "effect"
import { minorToDecimal } from "../../Domain/Billing.js"
import { escapeHtml } from "../../Domain/Html.js"
import { creditsToUsd } from "../../Domain/Money.js"
import type { Payment } from "../../Domain/Payment.js"
import { AppConfig } from "../AppConfig.js"
import { AuthConfig } from "../Auth/AuthConfig.js"
import { MailOutbox } from "../Mailer/MailOutbox.js"
import { OrgOwners } from "../Mailer/OrgOwners.js"

/**
 * Billing's mails to every owner of an org, queued in the durable outbox inside the
 * transaction of the change they report (so a mail exists exactly when the change does):
 * a receipt for each successful payment, a failed auto-reload (with a link to finish one
 * that needs the card holder), auto-reload switched off,
 * a plan that ended, a plan's fee that could not be charged.
 */
const render = (headline: string, lines: ReadonlyArray<string>, footer: string) => ({
  text: [headline, "", ...lines.map((line) => `- ${line}`), "", footer].join("\n"),
  html: [
    "<!doctype html><html><body style=\"font-family:sans-serif;line-height:1.5\">",
    `<h2>${escapeHtml(headline)}</h2><ul>${lines.map((line) => `<li>${escapeHtml(line)}</li>`).join("")}</ul>`,
    `<p style="color:#666;font-size:12px">${escapeHtml(footer)}</p></body></html>`
  ].join("")
})

export const describeAmount = (payment: Payment) =>
  `${payment.currency.toUpperCase()} ${minorToDecimal(payment.amount_minor)}`

const purposeName = { top_up: "Top-up", auto_reload: "Auto-reload", plan: "Plan fee" } as const

export class BillingMail extends Effect.Service<BillingMail>()("Billing/BillingMail", {
  effect: Effect.gen(function*() {
    const outbox = yield* MailOutbox
    const orgOwners = yield* OrgOwners
    const config = yield* AppConfig
    const baseUrl = Option.getOrElse(config.baseUrl, () => `http://localhost:${config.port}`)
    const { dashboardPath } = yield* AuthConfig
    const dashboardUrl = `${baseUrl}${dashboardPath === "/" ? "" : dashboardPath}`

    const toOwners = (
      orgId: string,
      dedupe: string,
      make: (
        orgName: string
      ) => { readonly subject: string; readonly headline: string; readonly lines: ReadonlyArray<string> }
    ) =>
      Effect.gen(function*() {
        const owners = yield* orgOwners.of(orgId)
        for (const owner of owners) {
          const content = make(owner.org_name)
          const footer =
            `Org: ${owner.org_name} (${orgId}) · Billing: GET ${baseUrl}/v1/orgs/${orgId}/billing · You receive this mail because you are an owner of this org.`
          yield* outbox.enqueue({
            to: owner.email,
            subject: `[${owner.org_name}] ${content.subject}`,
            ...render(content.headline, content.lines, footer),
            dedupeKey: `${dedupe}:owner:${owner.user_id}`
          })
        }
      })

    /** A receipt to every owner for a successful payment. */
    const receipt = (payment: Payment, sandbox: boolean) =>
      toOwners(payment.org_id, `payment:${payment.id}:receipt`, () => {
        const credits = payment.credits
        return {
          subject: `${sandbox ? "[Sandbox] " : ""}Receipt: ${describeAmount(payment)} paid`,
          headline: `${sandbox ? "Sandbox payment (no money moved)" : "Payment received"}: thank you`,
          lines: [
            `${purposeName[payment.purpose]} of ${describeAmount(payment)}, payment ${payment.id}.`,
            ...(credits > 0n
              ? [`${credits} credits ($${creditsToUsd(credits)}) were added to the org's balance.`]
              : []),
            ...(payment.plan === null
              ? []
              : [`Plan: ${payment.plan}${payment.offer === null ? "" : ` (${payment.offer})`}, one month.`]),
            ...(payment.fx_rate === null
              ? []
              : [
                `Converted from USD ${
                  minorToDecimal(payment.usd_cents)
                } at ${payment.fx_rate} INR per USD (ECB reference rate).`
              ]),
            ...(payment.card_last4 === null
              ? []
              : [`Card: ${payment.card_brand ?? "card"} ending ${payment.card_last4}.`]),
            ...(payment.receipt_url === null ? [] : [`The payment provider's receipt: ${payment.receipt_url}`])
          ]
        }
      })

    /**
     * A failed auto-reload charge. One the card's bank wants its holder to confirm (3-D
     * Secure) links to the billing page, which sends an owner to the payment page for the same
     * credits, where the bank asks them (the card is kept again for later charges).
     */
    const autoReloadFailed = (payment: Payment, failures: number, disabled: boolean, needsAuthentication: boolean) =>
      toOwners(payment.org_id, `payment:${payment.id}:auto-reload-failed`, () => ({
        subject: needsAuthentication
          ? "Auto-reload: confirm the charge with your bank"
          : disabled
          ? "Auto-reload switched off after 3 failed charges"
          : "Auto-reload charge failed",
        headline: disabled ? "Auto-reload is now off" : "An auto-reload charge failed",
        lines: [
          `The saved card could not be charged ${describeAmount(payment)}: ${payment.failure_message ?? "declined"}.`,
          ...(needsAuthentication
            ? [
              `The card's bank asks its holder to confirm this charge. To finish it (${payment.credits} credits), open ${dashboardUrl}/orgs/${payment.org_id}/billing?authenticate=${payment.id} and continue to the payment page.`
            ]
            : []),
          disabled
            ? "That was the 3rd failure in a row, so auto-reload has been switched off. Replace the card on the org's Billing page in the dashboard, then switch auto-reload on again."
            : `Failures in a row: ${failures} of 3; after 3, auto-reload switches off. It will try again later; to fix it now, replace the card on the org's Billing page in the dashboard.`
        ]
      }))

    const planEnded = (orgId: string, plan: string, reason: string, dedupe: string) =>
      toOwners(orgId, dedupe, () => ({
        subject: `Your ${plan} plan ended`,
        headline: "The org is back on Pay as you go",
        lines: [
          reason,
          "Existing agents and members are kept; new ones above the Pay as you go limits are refused.",
          "To return to the plan, choose it again on the org's Billing page in the dashboard."
        ]
      }))

    /** A plan's monthly fee (a renewal or a prorated change) could not be charged; the provider tries again. */
    const planPaymentFailed = (payment: Payment) =>
      toOwners(payment.org_id, `payment:${payment.id}:plan-payment-failed`, () => ({
        subject: "Your plan's monthly fee could not be charged",
        headline: "The plan's payment failed",
        lines: [
          `The card could not be charged ${describeAmount(payment)}: ${payment.failure_message ?? "declined"}.`,
          "The payment will be tried again over the next days; if every try fails, the org returns to Pay as you go.",
          "To avoid that, replace the card: open Manage billing on the org's Billing page in the dashboard."
        ]
      }))

    return { receipt, autoReloadFailed, planEnded, planPaymentFailed } as const
  }),
  dependencies: [OrgOwners.Default, AppConfig.Default, AuthConfig.Default]
}) {}
