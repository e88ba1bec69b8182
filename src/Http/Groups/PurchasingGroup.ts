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
  ExecuteRequest,
  ExecuteResult,
  Job,
  JobAccepted,
  Receipt,
  ReceiptItemList,
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
  PayerSpendCap,
  PaymentInvalid,
  PaymentReplayed,
  PaymentRequired,
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
import { AdminAuth, AgentAuth, KeyCheckedAgain, OrgAuth } from "../Security/AuthTags.js"
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

/**
 * Opening a dispute. The receipt's id is decoded here: text that is not a UUID names no
 * receipt (404 `not_found`, the receipt path id's message), while a value that is not text
 * at all stays a malformed body (400 `invalid_input`), as before the id was decoded here.
 */
export const DisputeRequest = Schema.Struct({
  receipt_id: Schema.compose(Schema.String, ReceiptIdParam).annotations({ description: "The receipt's id" }),
  item_index: Schema.Int.pipe(Schema.nonNegative()).annotations({ description: "The item's index in the receipt" }),
  reason: Schema.optional(Schema.String.pipe(Schema.maxLength(2000)).annotations({ description: "What was wrong" }))
}).annotations({ identifier: "DisputeRequest" })

/** Agent endpoints (agent key; 600 requests a minute per key). */
export class PurchasingGroup extends HttpApiGroup.make("purchasing")
  .add(
    HttpApiEndpoint.post("recommend", "/v1/recommend")
      .annotateContext(
        OpenApi.annotations({
          summary: "Recommend tools",
          description:
            "Ranks the tools of a task type by measured quality and price, before buying. Give `task_type` or describe the task in free text as `task`; each tool says whether it can be bought now (`purchasable`)."
        })
      )
      .setPayload(RecommendRequest)
      .addSuccess(RecommendResult)
      .addError(wire(UnknownTaskType))
      .addError(wire(DailyQuotaExceeded))
  )
  .add(
    HttpApiEndpoint.post("execute", "/v1/execute")
      .annotate(KeyCheckedAgain, ["test", "live"])
      .annotateContext(OpenApi.annotations({
        summary: "Buy results",
        description:
          "Runs a tool (its id or slug from recommend) on 1 to 1,000 inputs, each an object of the tool's input fields; only results that pass the published check are charged. Up to 25 inputs answer at once; more answer a job (`status: queued`) to follow. `max_price` caps the cost; `idempotency_key` makes a retry safe. An amount over the agent's approval threshold answers `approval_required`: retry with its `approval_id` once an owner approved. With x402 on (X402_ENABLED), a request without a key may pay per request instead (the `upto` scheme: the maximum authorised, only passing results settled; at most 25 inputs): without `PAYMENT-SIGNATURE` it answers 402 `payment_required` with `PAYMENT-REQUIRED`; with one, the answer carries `PAYMENT-RESPONSE` when something was settled and `record`, the signed record naming the payer (docs/x402-and-signatures.md)."
      }))
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
      .addError(wire(PaymentRequired))
      .addError(wire(PaymentInvalid))
      .addError(wire(PaymentReplayed))
      .addError(wire(PayerSpendCap))
  )
  .add(
    HttpApiEndpoint.get("job", "/v1/jobs/:id")
      .annotateContext(
        OpenApi.annotations({
          summary: "Get a job",
          description: "A job's progress and, when done, its items and receipt."
        })
      ).setPath(JobPath).addSuccess(Schema.Struct({ job: Job }))
  )
  .add(
    HttpApiEndpoint.get("receipts", "/v1/receipts")
      .annotateContext(
        OpenApi.annotations({
          summary: "List receipts",
          description: "The org's purchase receipts, newest first, with what each charged; page with `starting_after`."
        })
      ).setUrlParams(ReceiptPage).addSuccess(ReceiptList)
  )
  .add(
    HttpApiEndpoint.get("receipt", "/v1/receipts/:id")
      .annotateContext(
        OpenApi.annotations({
          summary: "Get a receipt",
          description: "One receipt with its items, checks and charges."
        })
      ).setPath(ReceiptPath).addSuccess(Schema.Struct({ receipt: Receipt }))
  )
  .add(
    HttpApiEndpoint.post("openDispute", "/v1/disputes")
      .annotateContext(
        OpenApi.annotations({
          summary: "Dispute a charged item",
          description:
            "Asks for a refund of a charged item (passed or partial) whose result was wrong, within 7 days: the receipt id, the item's index and why. An administrator decides; an upheld dispute refunds the item."
        })
      )
      .setPayload(DisputeRequest)
      .addSuccess(Schema.Struct({ dispute: Dispute }), { status: 201 })
      .addError(wire(DisputeWindowClosed))
      .addError(wire(NotDisputable))
      .addError(wire(Conflict))
      .addError(wire(PlanLimit))
  )
  .add(
    HttpApiEndpoint.get("dispute", "/v1/disputes/:id")
      .annotateContext(
        OpenApi.annotations({
          summary: "Get a dispute",
          description:
            "A dispute's status (open, upheld, rejected), the administrator's decision and note, and the refund."
        })
      ).setPath(DisputePath).addSuccess(Schema.Struct({ dispute: Dispute }))
  )
  .add(
    HttpApiEndpoint.get("approval", "/v1/approvals/:id")
      .annotateContext(
        OpenApi.annotations({
          summary: "Get an approval",
          description:
            "An approval's status (waiting, approved, rejected, expired), the tool and amount it is locked to, and when it expires; retry the purchase with its id once approved."
        })
      ).setPath(ApprovalPath).addSuccess(
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
      .annotateContext(
        OpenApi.annotations({
          summary: "List approvals",
          description: "The org's approvals, the waiting ones first; filter by status."
        })
      )
      .setPath(OrgPath)
      .setUrlParams(Schema.Struct({ ...pageOf(ApprovalIdParam).fields, status: ApprovalListParams.fields.status }))
      .addSuccess(ApprovalList)
  )
  .add(
    HttpApiEndpoint.get("approval", "/v1/orgs/:orgId/approvals/:id")
      .annotateContext(
        OpenApi.annotations({
          summary: "Get an approval",
          description: "One approval with tool, amount, reason and expiry."
        })
      )
      .setPath(OrgApprovalPath)
      .addSuccess(Schema.Struct({ approval: Approval }))
  )
  .add(
    HttpApiEndpoint.post("approve", "/v1/orgs/:orgId/approvals/:id/approve")
      .annotateContext(
        OpenApi.annotations({
          summary: "Approve a purchase",
          description: "Runs the waiting purchase; an optional note is kept with the decision."
        })
      )
      .setPath(OrgApprovalPath)
      .setPayload(DecisionRequest)
      .addSuccess(Schema.Struct({ approval: Approval }))
      .addError(wire(Conflict))
      .addError(wire(ApprovalExpired))
  )
  .add(
    HttpApiEndpoint.post("reject", "/v1/orgs/:orgId/approvals/:id/reject")
      .annotateContext(
        OpenApi.annotations({
          summary: "Reject a purchase",
          description: "The purchase is not made; an optional note is kept with the decision."
        })
      )
      .setPath(OrgApprovalPath)
      .setPayload(DecisionRequest)
      .addSuccess(Schema.Struct({ approval: Approval }))
      .addError(wire(Conflict))
      .addError(wire(ApprovalExpired))
  )
  .add(
    HttpApiEndpoint.get("receipts", "/v1/orgs/:orgId/receipts")
      .annotateContext(
        OpenApi.annotations({
          summary: "List the org's receipts",
          description: "Receipts of every agent of the org, newest first."
        })
      ).setPath(OrgPath).setUrlParams(ReceiptPage).addSuccess(
        ReceiptList
      )
  )
  .add(
    HttpApiEndpoint.get("receipt", "/v1/orgs/:orgId/receipts/:id")
      .annotateContext(
        OpenApi.annotations({
          summary: "Get one of the org's receipts",
          description: "One receipt with its items, checks and charges."
        })
      )
      .setPath(OrgReceiptPath)
      .addSuccess(Schema.Struct({ receipt: Receipt }))
  )
  .add(
    HttpApiEndpoint.get("receiptItems", "/v1/orgs/:orgId/receipts/:id/items")
      .annotateContext(
        OpenApi.annotations({
          summary: "List a receipt's items with inputs and results",
          description:
            "The receipt's items in index order, each with the input the agent sent and its result (charged items, kept 30 days). Not signed: the signed receipt holds their hashes. Page with `starting_after` (the last index seen)."
        })
      )
      .setPath(OrgReceiptPath)
      .setUrlParams(Schema.Struct({
        limit: pageLimitOrDefault,
        starting_after: Schema.optional(
          Schema.String.annotations({ description: "The index of the last item of the page before" })
        )
      }))
      .addSuccess(ReceiptItemList)
  )
  .add(
    HttpApiEndpoint.post("openDispute", "/v1/orgs/:orgId/disputes")
      .annotateContext(
        OpenApi.annotations({
          summary: "Dispute a charged item",
          description:
            "Disputes a passed or partial item of one of the org's receipts within 7 days; an administrator decides."
        })
      )
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
      .annotateContext(
        OpenApi.annotations({
          summary: "List the org's disputes",
          description: "The org's disputes, oldest first; filter by status."
        })
      )
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
  .add(
    HttpApiEndpoint.get("show", "/v1/approval-links/:token")
      .annotateContext(
        OpenApi.annotations({
          summary: "Open an approval link",
          description: "The approval behind a one-click link from the approval mail."
        })
      ).setPath(TokenPath).addSuccess(ApprovalPage)
  )
  .add(
    HttpApiEndpoint.post("decide", "/v1/approval-links/:token")
      .annotateContext(
        OpenApi.annotations({
          summary: "Decide through an approval link",
          description: "Approves or rejects the purchase of a one-click link."
        })
      ).setPath(TokenPath).addSuccess(ApprovalPage)
  )
  .add(
    HttpApiEndpoint.get("preview", "/v1/approval-links/:token/approval")
      .annotateContext(
        OpenApi.annotations({
          summary: "Read an approval link",
          description:
            "The approval behind a one-click link and the decision the link makes, as JSON (the dashboard's page)."
        })
      )
      .setPath(TokenPath)
      .addSuccess(ApprovalLinkPreview)
  )
  .add(
    HttpApiEndpoint.post("decision", "/v1/approval-links/:token/decision")
      .annotateContext(
        OpenApi.annotations({
          summary: "Use an approval link",
          description: "Makes the link's decision (once) and answers the decided approval, as JSON."
        })
      )
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
    HttpApiEndpoint.get("list", "/admin/disputes")
      .annotateContext(
        OpenApi.annotations({
          summary: "List disputes",
          description: "Disputes for administrators to decide; filter by status."
        })
      ).setUrlParams(Schema.Struct({
        ...DisputePage.fields,
        status: DisputeListParams.fields.status
      })).addSuccess(DisputeList)
  )
  .add(
    HttpApiEndpoint.post("decide", "/admin/disputes/:id/decide")
      .annotateContext(
        OpenApi.annotations({
          summary: "Decide a dispute",
          description: "Upholds (refunds the item) or rejects a dispute, with a note."
        })
      )
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
