import { HttpApiEndpoint, HttpApiGroup, HttpApiSchema, OpenApi } from "@effect/platform"
import { Schema } from "effect"
import {
  Approval,
  ApprovalList,
  ApprovalListParams,
  DecisionRequest,
  Dispute,
  DisputeDecisionRequest,
  DisputeList,
  DisputeListParams,
  DisputeRequest,
  ExecuteRequest,
  ExecuteResult,
  Job,
  JobAccepted,
  Receipt,
  ReceiptList,
  RecommendRequest,
  RecommendResult
} from "../../Domain/Purchasing.js"
import {
  ApprovalExpired,
  ApprovalMismatch,
  ApprovalRejected,
  ApprovalRequired,
  CheckFailed,
  Conflict,
  CreditsFrozen,
  DailyQuotaExceeded,
  DisputeWindowClosed,
  Forbidden,
  IdempotencyConflict,
  InsufficientCredits,
  InvalidInput,
  InvalidToken,
  LiveExecuteUnavailable,
  NotDisputable,
  NotFound,
  NotPurchasable,
  OverBudget,
  PlanLimit,
  PriceAboveMax,
  ProviderError,
  ReasonRequired,
  RequestInProgress,
  ToolPaused,
  ToolUnavailable,
  TrialLimit,
  UnknownTaskType,
  UnknownTool
} from "../../Errors/ApiErrors.js"
import { wire } from "../../Errors/Wire.js"
import { AdminAuth, AgentAuth, OrgAuth } from "../Security/AuthTags.js"
import { PublicRateLimit } from "../Security/RateLimitTags.js"
import { pageLimitOrDefault } from "./Pagination.js"
import { ApprovalIdParam, DisputeIdParam, JobIdParam, OrgIdParam, OrgPath, ReceiptIdParam } from "./PathIds.js"

/** Purchasing: recommend, execute, jobs, receipts, disputes and approvals. */
const JobPath = Schema.Struct({ id: JobIdParam })
const ReceiptPath = Schema.Struct({ id: ReceiptIdParam })
const DisputePath = Schema.Struct({ id: DisputeIdParam })
const ApprovalPath = Schema.Struct({ id: ApprovalIdParam })
const OrgApprovalPath = Schema.Struct({ orgId: OrgIdParam, id: ApprovalIdParam })
const OrgReceiptPath = Schema.Struct({ orgId: OrgIdParam, id: ReceiptIdParam })
/** A page of a list: `starting_after` is the id of the last record of the previous page. */
const pageOf = <A>(cursor: Schema.Schema<A, string>) =>
  Schema.Struct({ limit: pageLimitOrDefault, starting_after: Schema.optional(cursor) })
const ReceiptPage = pageOf(ReceiptIdParam)
const DisputePage = pageOf(DisputeIdParam)

/** Agent endpoints (agent key; 600 requests a minute per key). */
export class PurchasingGroup extends HttpApiGroup.make("purchasing")
  .add(
    HttpApiEndpoint.post("recommend", "/v1/recommend")
      .setPayload(RecommendRequest)
      .addSuccess(RecommendResult)
      .addError(wire(UnknownTaskType))
      .addError(wire(DailyQuotaExceeded))
  )
  .add(
    HttpApiEndpoint.post("execute", "/v1/execute")
      .setPayload(ExecuteRequest)
      .addSuccess(ExecuteResult)
      .addSuccess(JobAccepted, { status: 202 })
      // Answers with the error body but a success status: 200 nothing passed its check,
      // 202 an owner must approve (the statuses come from the error catalogue).
      .addSuccess(wire(CheckFailed))
      .addSuccess(wire(ApprovalRequired))
      .addError(wire(UnknownTool))
      .addError(wire(ToolPaused))
      .addError(wire(NotPurchasable))
      .addError(wire(ToolUnavailable))
      .addError(wire(LiveExecuteUnavailable))
      .addError(wire(PriceAboveMax))
      .addError(wire(ApprovalExpired))
      .addError(wire(ApprovalRejected))
      .addError(wire(ApprovalMismatch))
      .addError(wire(Conflict))
      .addError(wire(IdempotencyConflict))
      .addError(wire(RequestInProgress))
      .addError(wire(InsufficientCredits))
      .addError(wire(OverBudget))
      .addError(wire(CreditsFrozen))
      .addError(wire(TrialLimit))
      .addError(wire(ProviderError))
  )
  .add(HttpApiEndpoint.get("job", "/v1/jobs/:id").setPath(JobPath).addSuccess(Schema.Struct({ job: Job })))
  .add(HttpApiEndpoint.get("receipts", "/v1/receipts").setUrlParams(ReceiptPage).addSuccess(ReceiptList))
  .add(
    HttpApiEndpoint.get("receipt", "/v1/receipts/:id").setPath(ReceiptPath).addSuccess(
      Schema.Struct({ receipt: Receipt })
    )
  )
  .add(
    HttpApiEndpoint.post("openDispute", "/v1/disputes")
      .setPayload(DisputeRequest)
      .addSuccess(Schema.Struct({ dispute: Dispute }), { status: 201 })
      .addError(wire(DisputeWindowClosed))
      .addError(wire(NotDisputable))
      .addError(wire(Conflict))
      .addError(wire(PlanLimit))
  )
  .add(
    HttpApiEndpoint.get("dispute", "/v1/disputes/:id").setPath(DisputePath).addSuccess(
      Schema.Struct({ dispute: Dispute })
    )
  )
  .add(
    HttpApiEndpoint.get("approval", "/v1/approvals/:id").setPath(ApprovalPath).addSuccess(
      Schema.Struct({ approval: Approval })
    )
  )
  .addError(wire(InvalidInput))
  .addError(wire(NotFound))
  .middleware(AgentAuth)
  .annotateContext(OpenApi.annotations({
    title: "Purchasing",
    description:
      "An agent key. Recommend tools, buy verified results, follow jobs, read receipts, dispute charged items."
  }))
{}

/** Org endpoints: approvals (owners decide), receipts and disputes, by session or org key. */
export class OrgPurchasingGroup extends HttpApiGroup.make("orgPurchasing")
  .add(
    HttpApiEndpoint.get("approvals", "/v1/orgs/:orgId/approvals")
      .setPath(OrgPath)
      .setUrlParams(Schema.Struct({ ...pageOf(ApprovalIdParam).fields, status: ApprovalListParams.fields.status }))
      .addSuccess(ApprovalList)
  )
  .add(
    HttpApiEndpoint.get("approval", "/v1/orgs/:orgId/approvals/:id")
      .setPath(OrgApprovalPath)
      .addSuccess(Schema.Struct({ approval: Approval }))
  )
  .add(
    HttpApiEndpoint.post("approve", "/v1/orgs/:orgId/approvals/:id/approve")
      .setPath(OrgApprovalPath)
      .setPayload(DecisionRequest)
      .addSuccess(Schema.Struct({ approval: Approval }))
      .addError(wire(Conflict))
      .addError(wire(ApprovalExpired))
  )
  .add(
    HttpApiEndpoint.post("reject", "/v1/orgs/:orgId/approvals/:id/reject")
      .setPath(OrgApprovalPath)
      .setPayload(DecisionRequest)
      .addSuccess(Schema.Struct({ approval: Approval }))
      .addError(wire(Conflict))
      .addError(wire(ApprovalExpired))
  )
  .add(
    HttpApiEndpoint.get("receipts", "/v1/orgs/:orgId/receipts").setPath(OrgPath).setUrlParams(ReceiptPage).addSuccess(
      ReceiptList
    )
  )
  .add(
    HttpApiEndpoint.get("receipt", "/v1/orgs/:orgId/receipts/:id")
      .setPath(OrgReceiptPath)
      .addSuccess(Schema.Struct({ receipt: Receipt }))
  )
  .add(
    HttpApiEndpoint.post("openDispute", "/v1/orgs/:orgId/disputes")
      .setPath(OrgPath)
      .setPayload(DisputeRequest)
      .addSuccess(Schema.Struct({ dispute: Dispute }), { status: 201 })
      .addError(wire(DisputeWindowClosed))
      .addError(wire(NotDisputable))
      .addError(wire(Conflict))
      .addError(wire(PlanLimit))
  )
  .add(
    HttpApiEndpoint.get("disputes", "/v1/orgs/:orgId/disputes")
      .setPath(OrgPath)
      .setUrlParams(Schema.Struct({ ...DisputePage.fields, status: DisputeListParams.fields.status }))
      .addSuccess(DisputeList)
  )
  .addError(wire(InvalidInput))
  .addError(wire(NotFound))
  .addError(wire(Forbidden))
  .middleware(OrgAuth)
  .annotateContext(OpenApi.annotations({
    title: "Approvals, receipts and disputes",
    description:
      "Members read; owners (session or a write org key of an owner) approve or reject. Members (session or write key) dispute a charged item of any of the org's receipts."
  }))
{}

export const ApprovalPage = HttpApiSchema.Text({ contentType: "text/html; charset=utf-8" })
const TokenPath = Schema.Struct({ token: Schema.String })

/** What a link shows before it is used: the approval and the decision the link makes. */
export const ApprovalLinkPreview = Schema.Struct({
  approval: Approval,
  agent: Schema.Struct({ name: Schema.String, mode: Schema.Literal("test", "live") }).annotations({
    description: "The agent that asked (the link's reader may not be signed in to look it up)"
  }),
  decision: Schema.Literal("approve", "reject")
}).annotations({ identifier: "ApprovalLinkPreview" })

/**
 * The one-click links mailed to owners (the token is the credential). The mail points at
 * the dashboard's page for the link, which reads and uses it as JSON; the HTML pages serve
 * browsers without JavaScript.
 */
export class ApprovalLinksGroup extends HttpApiGroup.make("approvalLinks")
  .add(HttpApiEndpoint.get("show", "/v1/approval-links/:token").setPath(TokenPath).addSuccess(ApprovalPage))
  .add(HttpApiEndpoint.post("decide", "/v1/approval-links/:token").setPath(TokenPath).addSuccess(ApprovalPage))
  .add(
    HttpApiEndpoint.get("preview", "/v1/approval-links/:token/approval")
      .setPath(TokenPath)
      .addSuccess(ApprovalLinkPreview)
  )
  .add(
    HttpApiEndpoint.post("decision", "/v1/approval-links/:token/decision")
      .setPath(TokenPath)
      .addSuccess(Schema.Struct({ approval: Approval }))
  )
  .addError(wire(InvalidToken))
  .addError(wire(Forbidden))
  .addError(wire(Conflict))
  .addError(wire(ApprovalExpired))
  .middleware(PublicRateLimit)
  .annotateContext(OpenApi.annotations({
    title: "Approval links",
    description:
      "Opening a mailed link shows the purchase and one button; pressing it (POST) decides. Each link works once."
  }))
{}

/** Administrators decide disputes. */
export class AdminDisputesGroup extends HttpApiGroup.make("adminDisputes")
  .add(
    HttpApiEndpoint.get("list", "/admin/disputes").setUrlParams(Schema.Struct({
      ...DisputePage.fields,
      status: DisputeListParams.fields.status
    })).addSuccess(DisputeList)
  )
  .add(
    HttpApiEndpoint.post("decide", "/admin/disputes/:id/decide")
      .setPath(DisputePath)
      .setPayload(DisputeDecisionRequest)
      .addSuccess(Schema.Struct({ dispute: Dispute }))
      .addError(wire(ReasonRequired))
      .addError(wire(Conflict))
  )
  .addError(wire(InvalidInput))
  .addError(wire(NotFound))
  .middleware(AdminAuth)
  .annotateContext(OpenApi.annotations({
    title: "Disputes (administrators)",
    description: "An administrator's session. Upheld refunds the item through the ledger; a written reason is required."
  }))
{}
