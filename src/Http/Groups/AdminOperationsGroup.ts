import { HttpApiEndpoint, HttpApiGroup, OpenApi } from "@effect/platform"
import { Schema } from "effect"
import { OpeningRequestJson } from "../../Domain/EndpointOpening.js"
import { AuditEntryJson, BenchmarkRun, SampleSetSummary } from "../../Domain/Operations.js"
import { PlanId } from "../../Domain/Plans.js"
import { TaskTypeId } from "../../Domain/TaskType.js"
import { Check, ToolInput, ToolStatus } from "../../Domain/Tool.js"
import {
  AdapterNotReady,
  BelowAccuracyFloor,
  BenchmarkMissing,
  ConfirmationRequired,
  Conflict,
  InvalidAmount,
  PriceMissing,
  ReasonRequired,
  ResaleRightsMissing
} from "../../Errors/ApiErrors.js"
import { wire } from "../../Errors/Wire.js"
import { AdminAuth } from "../Security/AuthTags.js"
import { DeletionRequest, OrgPath, PathId, Timestamp } from "./IdentitySchemas.js"
import { pageLimitOrDefault } from "./Pagination.js"
import { AdminOrgIdParam, BenchmarkRunIdParam, DeletionRequestIdParam, OpeningRequestIdParam } from "./PathIds.js"

/**
 * The operator side, for administrators' sessions: tools and their publishing gates, org
 * credits, plans and endpoint openings, the gateway switch and provider caps, and the audit
 * log every one of these actions writes to.
 */
const Reason = Schema.String.pipe(Schema.maxLength(2000))
const WithReason = Schema.Struct({ reason: Schema.optional(Reason) })
const ToolPath = Schema.Struct({ tool: PathId.annotations({ description: "Tool id or slug" }) })
const Slug = Schema.String.pipe(Schema.pattern(/^[a-z0-9][a-z0-9-]{1,62}$/)).annotations({
  description: "Lower-case letters, digits and dashes"
})
const SignedCredits = Schema.Union(Schema.Number, Schema.String.pipe(Schema.maxLength(40)))

export const AdminTool = Schema.Struct({
  id: Schema.String,
  slug: Schema.String,
  name: Schema.String,
  provider: Schema.String,
  provider_name: Schema.String,
  task_type: Schema.String,
  description: Schema.String,
  status: ToolStatus,
  paused_reason: Schema.NullOr(Schema.String),
  resale_rights: Schema.Boolean,
  price_per_success_credits: Schema.NullOr(Schema.String),
  next_price: Schema.NullOr(Schema.Struct({ credits: Schema.String, valid_from: Timestamp })),
  gateway_endpoint: Schema.String,
  input: ToolInput,
  check: Check,
  adapter: Schema.NullOr(Schema.Struct({ ok: Schema.Boolean, problem: Schema.NullOr(Schema.String) })),
  latest_benchmark: Schema.NullOr(Schema.Struct({ date: Schema.String, accuracy: Schema.Number })),
  purchasable: Schema.Boolean,
  unavailable_reasons: Schema.Array(Schema.String)
}).annotations({ identifier: "AdminTool" })

/** A tool's fields as an administrator writes them (the admin script reads the same from a file). */
export const ToolFieldsPayload = Schema.Struct({
  slug: Slug,
  name: Schema.String.pipe(Schema.minLength(1), Schema.maxLength(200)),
  provider: Schema.String.pipe(Schema.minLength(1), Schema.maxLength(100)),
  provider_name: Schema.String.pipe(Schema.minLength(1), Schema.maxLength(200)),
  task_type: TaskTypeId,
  description: Schema.String.pipe(Schema.maxLength(4000)),
  resale_rights: Schema.Boolean,
  gateway_endpoint: Schema.String.pipe(Schema.minLength(1), Schema.maxLength(200)),
  input: ToolInput,
  check: Check
})

const Notified = Schema.Struct({ tool: AdminTool, notified_orgs: Schema.Int })

export class AdminToolsGroup extends HttpApiGroup.make("adminTools")
  .add(
    HttpApiEndpoint.get("list", "/admin/tools")
      .annotateContext(
        OpenApi.annotations({
          summary: "List tools (administrators)",
          description:
            "Every tool, unpublished ones included, with its gates, adapter check, scheduled price and pause reason."
        })
      ).addSuccess(Schema.Struct({ tools: Schema.Array(AdminTool) }))
  )
  .add(
    HttpApiEndpoint.post("create", "/admin/tools")
      .setPayload(ToolFieldsPayload)
      .addSuccess(Schema.Struct({ tool: AdminTool }), { status: 201 })
      .addError(wire(Conflict))
      .annotateContext(
        OpenApi.annotations({
          summary: "Create a tool",
          description: "A new tool starts information only; publish it when it passes the gates."
        })
      )
  )
  .add(
    HttpApiEndpoint.patch("update", "/admin/tools/:tool")
      .annotateContext(
        OpenApi.annotations({
          summary: "Edit a tool",
          description: "Changes the descriptive fields, resale rights, adapter endpoint or check."
        })
      )
      .setPath(ToolPath)
      .setPayload(Schema.partial(ToolFieldsPayload))
      .addSuccess(Schema.Struct({ tool: AdminTool }))
      .addError(wire(Conflict))
  )
  .add(
    HttpApiEndpoint.post("publish", "/admin/tools/:tool/publish")
      .setPath(ToolPath)
      .addSuccess(Schema.Struct({ tool: AdminTool }))
      .addError(wire(ResaleRightsMissing))
      .addError(wire(PriceMissing))
      .addError(wire(AdapterNotReady))
      .addError(wire(BenchmarkMissing))
      .addError(wire(BelowAccuracyFloor))
      .addError(wire(Conflict))
      .annotateContext(
        OpenApi.annotations({
          summary: "Publish a tool",
          description: "Makes the tool live when it passes every publishing gate."
        })
      )
  )
  .add(
    HttpApiEndpoint.post("pause", "/admin/tools/:tool/pause")
      .setPath(ToolPath)
      .setPayload(WithReason)
      .addSuccess(Notified)
      .addError(wire(ReasonRequired))
      .addError(wire(Conflict))
      .annotateContext(
        OpenApi.annotations({
          summary: "Pause a tool",
          description:
            "Execute then answers 409 tool_paused; tool.paused goes to every org that used the tool in the last 30 days."
        })
      )
  )
  .add(
    HttpApiEndpoint.post("resume", "/admin/tools/:tool/resume")
      .setPath(ToolPath)
      .addSuccess(Schema.Struct({ tool: AdminTool }))
      .addError(wire(ResaleRightsMissing))
      .addError(wire(PriceMissing))
      .addError(wire(AdapterNotReady))
      .addError(wire(BenchmarkMissing))
      .addError(wire(BelowAccuracyFloor))
      .addError(wire(Conflict))
      .annotateContext(
        OpenApi.annotations({
          summary: "Resume a tool",
          description: "Re-checks every publishing gate, then makes the tool live again."
        })
      )
  )
  .add(
    HttpApiEndpoint.post("price", "/admin/tools/:tool/price")
      .setPath(ToolPath)
      .setPayload(Schema.Struct({
        price_per_success_credits: Schema.Number,
        valid_from: Schema.optional(Timestamp),
        reason: Schema.optional(Reason)
      }))
      .addSuccess(Notified)
      .addError(wire(InvalidAmount))
      .annotateContext(
        OpenApi.annotations({
          summary: "Change a tool's price",
          description:
            "The new price counts from valid_from (now when absent; never earlier). price.changed goes to every org that used the tool in the last 30 days; approvals already granted keep their amount."
        })
      )
  )
  .add(
    HttpApiEndpoint.post("checkAdapter", "/admin/tools/:tool/check-adapter")
      .annotateContext(
        OpenApi.annotations({
          summary: "Check a tool's adapter",
          description: "Runs the health check of the tool's provider connection now and keeps the result."
        })
      )
      .setPath(ToolPath)
      .addSuccess(Schema.Struct({
        tool: AdminTool,
        adapter: Schema.Struct({ ok: Schema.Boolean, problem: Schema.NullOr(Schema.String) })
      }))
  )
  .add(
    HttpApiEndpoint.post("benchmark", "/admin/tools/:tool/benchmarks")
      .setPath(ToolPath)
      .setPayload(Schema.Struct({ sample_set: Schema.optional(Schema.String.pipe(Schema.maxLength(200))) }))
      .addSuccess(Schema.Struct({ run: BenchmarkRun }), { status: 202 })
      .addError(wire(Conflict))
      .annotateContext(
        OpenApi.annotations({
          summary: "Start a benchmark run",
          description:
            "Queues a measured benchmark run over a labelled sample set of the tool's task type (default: the newest); follow it at GET /admin/benchmark-runs/{id}. Nothing is charged to any org."
        })
      )
  )
  .add(
    HttpApiEndpoint.get("benchmarks", "/admin/tools/:tool/benchmarks")
      .annotateContext(
        OpenApi.annotations({
          summary: "A tool's benchmark runs",
          description: "The tool's runs, newest first, with progress and results."
        })
      )
      .setPath(ToolPath)
      .addSuccess(Schema.Struct({ runs: Schema.Array(BenchmarkRun) }))
  )
  .add(
    HttpApiEndpoint.get("benchmarkRun", "/admin/benchmark-runs/:id")
      .annotateContext(
        OpenApi.annotations({
          summary: "A benchmark run",
          description: "Status, progress and, once done, the measured results."
        })
      )
      .setPath(Schema.Struct({ id: BenchmarkRunIdParam }))
      .addSuccess(Schema.Struct({ run: BenchmarkRun }))
  )
  .add(
    HttpApiEndpoint.get("sampleSets", "/admin/sample-sets")
      .annotateContext(
        OpenApi.annotations({
          summary: "Sample sets",
          description: "The labelled sample sets benchmark runs use, by task type."
        })
      )
      .addSuccess(Schema.Struct({ sample_sets: Schema.Array(SampleSetSummary) }))
  )
  .middleware(AdminAuth)
  .annotateContext(OpenApi.annotations({
    title: "Administrators: tools",
    description: "An administrator's session. Every action is written to the audit log."
  }))
{}

export class AdminOrgsGroup extends HttpApiGroup.make("adminOrgs")
  .add(
    HttpApiEndpoint.post("adjust", "/admin/orgs/:orgId/credits/adjust")
      .setPath(OrgPath)
      .setPayload(Schema.Struct({
        credits: SignedCredits.annotations({ description: "Whole credits; negative to debit" }),
        reason: Schema.optional(Reason),
        confirm_credits: Schema.optional(SignedCredits)
      }))
      .addSuccess(Schema.Struct({ org_id: Schema.String, credits: Schema.String, balance: Schema.String }))
      .addError(wire(InvalidAmount))
      .addError(wire(ReasonRequired))
      .addError(wire(ConfirmationRequired))
      .annotateContext(
        OpenApi.annotations({
          summary: "Adjust an org's credits",
          description:
            "Credits (positive) or debits (negative) the org through the ledger. Above the confirmation size (default 1,000,000 credits) confirm_credits must equal credits."
        })
      )
  )
  .add(
    HttpApiEndpoint.post("freeze", "/admin/orgs/:orgId/credits/freeze")
      .setPath(OrgPath)
      .setPayload(WithReason)
      .addSuccess(Schema.Struct({ org_id: Schema.String, credits_frozen: Schema.Literal(true) }))
      .addError(wire(ReasonRequired))
      .annotateContext(
        OpenApi.annotations({
          summary: "Freeze an org's credits",
          description: "Purchases and calls answer 403 credits_frozen; every read still works."
        })
      )
  )
  .add(
    HttpApiEndpoint.put("plan", "/admin/orgs/:orgId/plan")
      .annotateContext(
        OpenApi.annotations({
          summary: "Change an org's plan",
          description: "Moves the org to another plan without a payment, with a reason."
        })
      )
      .setPath(OrgPath)
      .setPayload(Schema.Struct({ plan: PlanId, reason: Schema.optional(Reason) }))
      .addSuccess(Schema.Struct({ org_id: Schema.String, plan: PlanId }))
      .addError(wire(ReasonRequired))
  )
  .add(
    HttpApiEndpoint.post("openEndpoint", "/admin/orgs/:orgId/openings")
      .setPath(OrgPath)
      .setPayload(
        Schema.Struct({ endpoint: Schema.String.pipe(Schema.maxLength(200)), reason: Schema.optional(Reason) })
      )
      .addSuccess(Schema.Struct({ org_id: Schema.String, endpoint_id: Schema.String, open: Schema.Boolean }))
      .annotateContext(
        OpenApi.annotations({
          summary: "Open an endpoint for an org",
          description: "Opens an on-request endpoint for this org's agents."
        })
      )
  )
  .add(
    HttpApiEndpoint.post("closeEndpoint", "/admin/orgs/:orgId/openings/:endpoint/close")
      .annotateContext(
        OpenApi.annotations({
          summary: "Close an endpoint for an org",
          description: "The org's agents get 409 endpoint_on_request again."
        })
      )
      .setPath(Schema.Struct({ orgId: AdminOrgIdParam, endpoint: Schema.String }))
      .setPayload(WithReason)
      .addSuccess(Schema.Struct({ org_id: Schema.String, endpoint_id: Schema.String, open: Schema.Boolean }))
      .addError(wire(ReasonRequired))
  )
  .add(
    HttpApiEndpoint.get("deletionRequests", "/admin/deletion-requests")
      .annotateContext(
        OpenApi.annotations({
          summary: "Queue of data-deletion requests",
          description: "Orgs' data-deletion requests, oldest first; filter by status."
        })
      )
      .setUrlParams(Schema.Struct({ status: Schema.optional(Schema.Literal("pending", "completed", "cancelled")) }))
      .addSuccess(Schema.Struct({
        deletion_requests: Schema.Array(Schema.Struct({ ...DeletionRequest.fields, org_name: Schema.String }))
      }))
  )
  .add(
    HttpApiEndpoint.post("carryOutDeletion", "/admin/deletion-requests/:id/carry-out")
      .setPath(Schema.Struct({ id: DeletionRequestIdParam }))
      .addSuccess(Schema.Struct({ deletion_request: DeletionRequest }))
      .addError(wire(Conflict))
      .annotateContext(
        OpenApi.annotations({
          summary: "Carry out a data-deletion request",
          description:
            "Erases or anonymises the org's personal data, keeps ledger entries, receipts and payments without personal fields, closes the org, and mails the asker a summary."
        })
      )
  )
  .middleware(AdminAuth)
  .annotateContext(OpenApi.annotations({
    title: "Administrators: orgs",
    description: "An administrator's session. Every action is written to the audit log."
  }))
{}

export class AdminGatewayGroup extends HttpApiGroup.make("adminGateway")
  .add(
    HttpApiEndpoint.put("switch", "/admin/gateway")
      .setPayload(Schema.Struct({ enabled: Schema.Boolean, reason: Schema.optional(Reason) }))
      .addSuccess(Schema.Struct({ enabled: Schema.Boolean }))
      .addError(wire(ReasonRequired))
      .annotateContext(
        OpenApi.annotations({
          summary: "Switch the gateway on or off",
          description:
            "Switches the gateway on or off for every replica within a second (503 endpoint_unavailable while off)."
        })
      )
  )
  .add(
    HttpApiEndpoint.put("providerCap", "/admin/providers/:provider/cap")
      .annotateContext(
        OpenApi.annotations({
          summary: "Change a provider's daily call cap",
          description: "Each org's daily calls to the provider are capped at this number (429 provider_quota)."
        })
      )
      .setPath(Schema.Struct({ provider: Schema.String }))
      .setPayload(Schema.Struct({ daily_call_cap: Schema.Number, reason: Schema.optional(Reason) }))
      .addSuccess(Schema.Struct({ provider_id: Schema.String, daily_call_cap: Schema.Int }))
  )
  .add(
    HttpApiEndpoint.put("providerSigning", "/admin/providers/:provider/request-signing")
      .annotateContext(
        OpenApi.annotations({
          summary: "Sign a provider's requests, or not",
          description:
            "Requests to every provider carry the service's Web Bot Auth signature (`Signature`, `Signature-Input`, `Signature-Agent`); `signs_requests: false` sends this provider's unsigned, e.g. when it refuses signatures it does not know. Every replica follows within 5 seconds."
        })
      )
      .setPath(Schema.Struct({ provider: Schema.String }))
      .setPayload(Schema.Struct({ signs_requests: Schema.Boolean, reason: Schema.optional(Reason) }))
      .addSuccess(Schema.Struct({ provider_id: Schema.String, signs_requests: Schema.Boolean }))
  )
  .add(
    HttpApiEndpoint.get("openingRequests", "/admin/opening-requests")
      .annotateContext(
        OpenApi.annotations({
          summary: "Queue of opening requests",
          description: "Orgs' requests to open on-request endpoints, oldest first; filter by status."
        })
      )
      .setUrlParams(Schema.Struct({ status: Schema.optional(Schema.Literal("pending", "opened", "declined")) }))
      .addSuccess(Schema.Struct({ requests: Schema.Array(OpeningRequestJson) }))
  )
  .add(
    HttpApiEndpoint.post("declineOpening", "/admin/opening-requests/:id/decline")
      .annotateContext(
        OpenApi.annotations({
          summary: "Decline an opening request",
          description: "Declines a pending request with a written reason."
        })
      )
      .setPath(Schema.Struct({ id: OpeningRequestIdParam }))
      .setPayload(WithReason)
      .addSuccess(Schema.Struct({ request: OpeningRequestJson }))
      .addError(wire(ReasonRequired))
      .addError(wire(Conflict))
  )
  .middleware(AdminAuth)
  .annotateContext(OpenApi.annotations({
    title: "Administrators: gateway",
    description: "An administrator's session. Every action is written to the audit log."
  }))
{}

export class AdminAuditGroup extends HttpApiGroup.make("adminAudit")
  .add(
    HttpApiEndpoint.get("list", "/admin/audit")
      .setUrlParams(Schema.Struct({
        admin_id: Schema.optional(Schema.String),
        action: Schema.optional(Schema.String),
        target_type: Schema.optional(Schema.String),
        target_id: Schema.optional(Schema.String),
        limit: pageLimitOrDefault,
        starting_after: Schema.optional(Schema.String)
      }))
      .addSuccess(Schema.Struct({ entries: Schema.Array(AuditEntryJson), has_more: Schema.Boolean }))
      .annotateContext(
        OpenApi.annotations({
          summary: "Read the audit log",
          description: "Newest first. The log is append-only: nothing in it can be edited or deleted."
        })
      )
  )
  .middleware(AdminAuth)
  .annotateContext(OpenApi.annotations({
    title: "Administrators: audit log",
    description: "An administrator's session."
  }))
{}
