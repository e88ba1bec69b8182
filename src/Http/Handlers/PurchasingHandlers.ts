import { HttpApiBuilder, HttpServerResponse } from "@effect/platform"
import { Effect } from "effect"
import { CurrentActor, CurrentAdmin, CurrentAgent } from "../../Domain/Current.js"
import { escapeHtml } from "../../Domain/Html.js"
import { creditsToUsd } from "../../Domain/Money.js"
import type { Approval } from "../../Domain/Purchasing.js"
import { Approvals } from "../../Services/Approvals/Approvals.js"
import { PublicUrl } from "../../Services/PublicUrl.js"
import { Disputes } from "../../Services/Purchasing/Disputes.js"
import { Execute } from "../../Services/Purchasing/Execute.js"
import { JobRunner } from "../../Services/Purchasing/Jobs.js"
import { Receipts } from "../../Services/Purchasing/Receipts.js"
import { Recommend } from "../../Services/Purchasing/Recommend.js"
import { Api } from "../Api.js"

export const PurchasingHandlers = HttpApiBuilder.group(Api, "purchasing", (handlers) =>
  Effect.gen(function*() {
    const recommend = yield* Recommend
    const execute = yield* Execute
    const jobs = yield* JobRunner
    const receipts = yield* Receipts
    const disputes = yield* Disputes
    const approvals = yield* Approvals
    const baseUrl = yield* PublicUrl
    return handlers
      .handle(
        "recommend",
        ({ payload }) => Effect.flatMap(CurrentAgent, (agent) => recommend.recommend(agent, payload))
      )
      .handle("execute", ({ payload }) =>
        // Each answer is a declared variant of the endpoint, encoded with its own status.
        Effect.flatMap(CurrentAgent, (agent) => execute.execute(agent, payload, baseUrl)))
      .handle("job", ({ path }) =>
        Effect.flatMap(CurrentAgent, (agent) =>
          Effect.map(jobs.get(agent.org_id, path.id), (job) => ({ job }))))
      .handle("receipts", ({ urlParams }) =>
        Effect.flatMap(CurrentAgent, (agent) =>
          receipts.list(agent.org_id, { limit: urlParams.limit, startingAfter: urlParams.starting_after })))
      .handle("receipt", ({ path }) =>
        Effect.flatMap(CurrentAgent, (agent) =>
          Effect.map(receipts.get(agent.org_id, path.id), (receipt) => ({ receipt }))))
      .handle("openDispute", ({ payload }) =>
        Effect.flatMap(CurrentAgent, (agent) =>
          Effect.map(disputes.open(agent, payload), (dispute) => ({ dispute }))))
      .handle("dispute", ({ path }) =>
        Effect.flatMap(CurrentAgent, (agent) =>
          Effect.map(disputes.get(agent.org_id, path.id), (dispute) => ({ dispute }))))
      .handle("approval", ({ path }) =>
        Effect.flatMap(CurrentAgent, (agent) =>
          Effect.map(approvals.get(agent.org_id, path.id), (approval) => ({ approval }))))
  }))

export const OrgPurchasingHandlers = HttpApiBuilder.group(Api, "orgPurchasing", (handlers) =>
  Effect.gen(function*() {
    const approvals = yield* Approvals
    const receipts = yield* Receipts
    const disputes = yield* Disputes
    return handlers
      .handle("approvals", ({ urlParams }) =>
        Effect.flatMap(CurrentActor, (actor) =>
          approvals.list(actor.org_id, {
            status: urlParams.status,
            limit: urlParams.limit,
            startingAfter: urlParams.starting_after
          })))
      .handle("approval", ({ path }) =>
        Effect.flatMap(CurrentActor, (actor) =>
          Effect.map(approvals.get(actor.org_id, path.id), (approval) => ({ approval }))))
      .handle("approve", ({ path, payload }) =>
        Effect.flatMap(CurrentActor, (actor) =>
          Effect.map(approvals.decide(actor, path.id, "approve", payload.note ?? null), (approval) => ({ approval }))))
      .handle("reject", ({ path, payload }) =>
        Effect.flatMap(CurrentActor, (actor) =>
          Effect.map(approvals.decide(actor, path.id, "reject", payload.note ?? null), (approval) => ({ approval }))))
      .handle("receipts", ({ urlParams }) =>
        Effect.flatMap(CurrentActor, (actor) =>
          receipts.list(actor.org_id, { limit: urlParams.limit, startingAfter: urlParams.starting_after })))
      .handle("receipt", ({ path }) =>
        Effect.flatMap(CurrentActor, (actor) =>
          Effect.map(receipts.get(actor.org_id, path.id), (receipt) => ({ receipt }))))
      .handle("receiptItems", ({ path, urlParams }) =>
        Effect.flatMap(CurrentActor, (actor) =>
          receipts.items(actor.org_id, path.id, { limit: urlParams.limit, startingAfter: urlParams.starting_after })))
      .handle("openDispute", ({ payload }) =>
        Effect.flatMap(CurrentActor, (actor) =>
          Effect.map(disputes.openForOrg(actor.org_id, payload), (dispute) => ({ dispute }))))
      .handle("disputes", ({ urlParams }) =>
        Effect.flatMap(CurrentActor, (actor) =>
          disputes.list({
            orgId: actor.org_id,
            status: urlParams.status,
            limit: urlParams.limit,
            startingAfter: urlParams.starting_after
          })))
  }))

const page = (title: string, body: string) =>
  HttpServerResponse.html(`<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="referrer" content="no-referrer"><meta name="robots" content="noindex">
<title>${escapeHtml(title)}</title>
<style>body{font-family:system-ui,sans-serif;max-width:36rem;margin:3rem auto;padding:0 1rem;line-height:1.5}
button{font-size:1.1rem;padding:.6rem 1.4rem;cursor:pointer}dt{font-weight:600}</style></head>
<body>${body}</body></html>`).pipe(
    HttpServerResponse.setHeaders({
      "cache-control": "no-store",
      "referrer-policy": "no-referrer",
      "x-frame-options": "DENY"
    })
  )

const details = (approval: Approval) => {
  const amount = approval.amount_credits
  return `<dl>
<dt>Tool</dt><dd>${escapeHtml(approval.tool.name)} (${escapeHtml(approval.tool.slug)})</dd>
<dt>Items</dt><dd>${approval.item_count}</dd>
<dt>Amount</dt><dd>up to ${amount} credits ($${creditsToUsd(amount)})</dd>
<dt>Why</dt><dd>${
    approval.reason === "over_budget" ? "over the agent's monthly budget" : "above the agent's approval threshold"
  }</dd>
<dt>Status</dt><dd>${approval.status}</dd>
<dt>Expires</dt><dd>${approval.expires_at.toISOString()}</dd>
</dl>`
}

export const ApprovalLinksHandlers = HttpApiBuilder.group(Api, "approvalLinks", (handlers) =>
  Effect.gen(function*() {
    const approvals = yield* Approvals
    return handlers
      .handle("show", ({ path }) =>
        Effect.map(approvals.linkPreview(path.token), ({ approval, decision }) => {
          const verb = decision === "approve" ? "Approve" : "Reject"
          if (approval.status !== "waiting") {
            return page("Purchase already decided", `<h1>This purchase is ${approval.status}</h1>${details(approval)}`)
          }
          return page(
            `${verb} this purchase?`,
            `<h1>${verb} this purchase?</h1>${details(approval)}
<form method="post" action="/v1/approval-links/${
              encodeURIComponent(path.token)
            }"><button type="submit">${verb}</button></form>`
          )
        }))
      .handle("preview", ({ path }) => approvals.linkPreview(path.token))
      .handle(
        "decision",
        ({ path }) => Effect.map(approvals.decideByLink(path.token), ({ approval }) => ({ approval }))
      )
      .handle("decide", ({ path }) =>
        Effect.map(approvals.decideByLink(path.token), ({ approval }) =>
          page(
            `Purchase ${approval.status}`,
            `<h1>Purchase ${approval.status}</h1>${details(approval)}
<p>The agent can now retry its purchase with <code>approval_id</code> ${escapeHtml(approval.id)}.</p>`
          )))
  }))

export const AdminDisputesHandlers = HttpApiBuilder.group(Api, "adminDisputes", (handlers) =>
  Effect.gen(function*() {
    const disputes = yield* Disputes
    return handlers
      .handle("list", ({ urlParams }) =>
        disputes.list({ status: urlParams.status, limit: urlParams.limit, startingAfter: urlParams.starting_after }))
      .handle("decide", ({ path, payload }) =>
        Effect.flatMap(CurrentAdmin, (admin) =>
          Effect.map(disputes.decide(admin, path.id, payload.decision, payload.reason), (dispute) => ({ dispute }))))
  }))
