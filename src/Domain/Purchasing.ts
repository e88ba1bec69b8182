import { Schema, Struct } from "effect"
import { ApprovalStatus, PurchaseApproval } from "./Approval.js"
import { DisputeStatus, SignedDispute } from "./Dispute.js"
import { ScorePartsSchema } from "./Formula.js"
import { ApprovalId, JobId, ReceiptId } from "./Ids.js"
import { AnyJson } from "./Json.js"
import { Amount } from "./Money.js"
import { PayerRecord } from "./PayerRecord.js"
import { PurchaseItem } from "./PurchaseItem.js"
import { PurchaseJob } from "./PurchaseJob.js"
import { ItemCounts, ReceiptTotals, ToolRef } from "./Receipt.js"
import { RecordSignature } from "./RecordSignature.js"
import { TaskTypeId, taskTypeIds } from "./TaskType.js"
import { Check, ToolStatus } from "./Tool.js"

/**
 * The records of purchasing as the API shows them: recommendations, purchase answers,
 * receipts and their items, jobs, approvals and disputes. Credits are amount objects;
 * timestamps ISO 8601 UTC with milliseconds.
 */
const Timestamp = Schema.String.annotations({ description: "ISO 8601 UTC with milliseconds" })

/** The tool a purchase names, and its items by outcome (Domain/Receipt.ts). */
export { ItemCounts, ToolRef } from "./Receipt.js"

// ---------------------------------------------------------------------------------------
// Recommend

export const RecommendRequest = Schema.Struct({
  // Any string decodes, so an unknown one answers `unknown_task_type`; the schema lists the seven.
  task_type: Schema.optional(Schema.String.annotations({
    jsonSchema: { type: "string", enum: taskTypeIds, description: "One of the seven task types" }
  })),
  task: Schema.optional(
    Schema.String.pipe(Schema.minLength(1), Schema.maxLength(2000)).annotations({
      description: "Free text, mapped to a task type by the published keyword table"
    })
  )
}).annotations({ identifier: "RecommendRequest" })

export const RecommendedTool = Schema.Struct({
  rank: Schema.Int,
  tool_id: Schema.String,
  slug: Schema.String,
  name: Schema.String,
  provider: Schema.String,
  provider_name: Schema.String,
  status: ToolStatus,
  purchasable: Schema.Boolean,
  price_per_success: Schema.NullOr(Amount),
  score: Schema.Number,
  parts: ScorePartsSchema,
  check: Check
}).annotations({ identifier: "RecommendedTool" })

export const LookupCount = Schema.Struct({
  used: Schema.Int,
  limit: Schema.NullOr(Schema.Int).annotations({ description: "null: no fixed limit" })
})

export const RecommendResult = Schema.Struct({
  task_type: TaskTypeId,
  task_match: Schema.NullOr(Schema.Struct({
    method: Schema.Literal("keywords"),
    matched_words: Schema.Array(Schema.String),
    score: Schema.Int
  })),
  formula_version: Schema.String,
  tools: Schema.Array(RecommendedTool),
  lookups_today: Schema.Struct({
    score_lookups: LookupCount,
    free_text_lookups: LookupCount,
    resets_at: Timestamp
  })
}).annotations({ identifier: "RecommendResult" })
export type RecommendResult = typeof RecommendResult.Type

// ---------------------------------------------------------------------------------------
// Execute, receipts, jobs

/** Credits: a whole number, or a string of digits. */
export const CreditsInput = Schema.Union(
  Schema.Int.pipe(Schema.nonNegative()),
  Schema.String.pipe(Schema.pattern(/^\d{1,18}$/))
).annotations({ description: "Whole credits (a number or a string of digits)" })

export const ExecuteRequest = Schema.Struct({
  tool: Schema.String.pipe(Schema.minLength(1), Schema.maxLength(200)).annotations({
    description: "The tool's id or slug"
  }),
  inputs: Schema.Array(Schema.Record({ key: Schema.String, value: AnyJson })).annotations({
    description: "1 to 1,000 inputs, each an object of the tool's input fields"
  }),
  max_price: Schema.optional(CreditsInput),
  idempotency_key: Schema.optional(
    Schema.String.pipe(Schema.minLength(1), Schema.maxLength(255)).annotations({
      description: "The same key answers the first request's answer again instead of buying twice"
    })
  ),
  fallback: Schema.optional(
    Schema.Boolean.annotations({
      description:
        "When the provider fails, let the service use the next-ranked tool of the task type, at no more than the price held"
    })
  ),
  approval_id: Schema.optional(
    ApprovalId.annotations({ description: "An approved approval's id, to run the purchase it was approved for" })
  )
}).annotations({ identifier: "ExecuteRequest" })
export type ExecuteRequest = typeof ExecuteRequest.Type

export const ItemOutcome = Schema.Literal("pending", "running", "passed", "partial", "failed", "expired")
export type ItemOutcome = typeof ItemOutcome.Type

const itemColumns = PurchaseItem.json.fields

/**
 * An item as a receipt names it: the item's columns as the wire names them (`PurchaseItem`),
 * and what is computed from them (charged or not, the input's hash, the check).
 */
const leadingColumns = ["idx", "status"] as const
const outcomeColumns = [
  "reason",
  "error_code",
  "tool_id",
  "provider",
  "fallback_from",
  "cost_credits",
  "refunded_credits"
] as const

/** The item's own columns a receipt item shows (in `ReceiptItem`, between the computed fields). */
export const receiptItemColumns = [...leadingColumns, ...outcomeColumns, "result_hash", "finished_at"] as const

export const ReceiptItem = Schema.Struct({
  ...Struct.pick(itemColumns, ...leadingColumns),
  charged: Schema.Boolean,
  ...Struct.pick(itemColumns, ...outcomeColumns),
  input_hash: Schema.String.annotations({ description: "SHA-256 hex of the canonical JSON of the input" }),
  ...Struct.pick(itemColumns, "result_hash"),
  check: Schema.NullOr(Schema.Struct({ id: Schema.String, version: Schema.String })),
  ...Struct.pick(itemColumns, "finished_at")
}).annotations({ identifier: "ReceiptItem" })
export type ReceiptItem = typeof ReceiptItem.Type

/** An item with its result, as the buyer sees it in an execute answer or a job. */
export const ResultItem = Schema.Struct({
  ...ReceiptItem.fields,
  result: Schema.NullOr(AnyJson).annotations({
    description: "The result in the task type's canonical shape (charged items only)"
  })
}).annotations({ identifier: "ResultItem" })
export type ResultItem = typeof ResultItem.Type

/** The wire's receipt summary: the `ReceiptTotals` model's json variant (Domain/Receipt.ts). */
export const ReceiptSummary = ReceiptTotals.json.annotations({ identifier: "ReceiptSummary", title: undefined })
export type ReceiptSummary = typeof ReceiptSummary.Type

export const Receipt = Schema.Struct({
  ...ReceiptSummary.fields,
  items: Schema.Array(ReceiptItem),
  signature: RecordSignature
}).annotations({ identifier: "Receipt" })
export type Receipt = typeof Receipt.Type

/**
 * An item with its input and its kept result, as the org's members read it: not part of the
 * signed receipt (which holds their hashes), and a result is kept for 30 days.
 */
export const ReceiptItemDetail = Schema.Struct({
  ...ResultItem.fields,
  input: Schema.Record({ key: Schema.String, value: AnyJson }).annotations({
    description: "The input as the agent sent it"
  }),
  result: Schema.NullOr(AnyJson).annotations({
    description:
      "The result in the task type's canonical shape: charged items only, kept 30 days after the item finished (result_hash stays)"
  })
}).annotations({ identifier: "ReceiptItemDetail" })
export type ReceiptItemDetail = typeof ReceiptItemDetail.Type

export const ReceiptItemList = Schema.Struct({
  items: Schema.Array(ReceiptItemDetail),
  has_more: Schema.Boolean
}).annotations({ identifier: "ReceiptItemList" })

export const ReceiptList = Schema.Struct({
  receipts: Schema.Array(ReceiptSummary),
  has_more: Schema.Boolean
}).annotations({ identifier: "ReceiptList" })

export const ListParams = Schema.Struct({
  limit: Schema.optional(Schema.NumberFromString.pipe(Schema.int(), Schema.between(1, 200))),
  starting_after: Schema.optional(Schema.String)
})

/** 200: the items ran (at least one was charged, or some failed and some passed). */
export const ExecuteResult = Schema.Struct({
  status: Schema.Literal("done"),
  receipt_id: Schema.String,
  mode: Schema.Literal("test", "live"),
  tool: ToolRef,
  item_count: Schema.Int,
  charged: Amount,
  counts: ItemCounts,
  fallback_used: Schema.Boolean,
  items: Schema.Array(ResultItem),
  record: Schema.optional(PayerRecord)
}).annotations({ identifier: "ExecuteResult" })
export type ExecuteResult = typeof ExecuteResult.Type

/** 202: more than 25 inputs run as a job; every item is already held. */
export const JobAccepted = Schema.Struct({
  status: Schema.Literal("queued"),
  job_id: JobId,
  receipt_id: ReceiptId,
  item_count: Schema.Int,
  held: Amount,
  deadline_at: Timestamp
}).annotations({ identifier: "JobAccepted" })
export type JobAccepted = typeof JobAccepted.Type

/** A job as its buyer follows it: the job's own fields (Domain/PurchaseJob.ts) with its receipt's tool, totals and items. */
export const Job = Schema.Struct({
  ...Struct.pick(PurchaseJob.json.fields, "id", "status", "receipt_id"),
  tool: ToolRef,
  item_count: Schema.Int,
  progress: Schema.Struct({ done: Schema.Int, total: Schema.Int }),
  counts: ItemCounts,
  charged: Amount,
  ...Struct.pick(PurchaseJob.json.fields, "created_at", "started_at", "completed_at", "deadline_at"),
  items: Schema.Array(ResultItem)
}).annotations({ identifier: "Job" })
export type Job = typeof Job.Type

// ---------------------------------------------------------------------------------------
// Approvals

export { ApprovalStatus } from "./Approval.js"

/**
 * The wire's approval: the `PurchaseApproval` record's fields (Domain/Approval.ts) with what
 * is worked out from them: the status now, the tool, and whether a purchase used it.
 */
export const Approval = Schema.Struct({
  ...Struct.pick(PurchaseApproval.json.fields, "id"),
  status: ApprovalStatus,
  ...Struct.pick(PurchaseApproval.json.fields, "reason", "agent_id"),
  tool: ToolRef,
  ...Struct.pick(
    PurchaseApproval.json.fields,
    "item_count",
    "amount_credits",
    "note",
    "decided_by_email",
    "decided_via",
    "created_at",
    "expires_at",
    "decided_at"
  ),
  used: Schema.Boolean,
  ...Struct.pick(PurchaseApproval.json.fields, "receipt_id")
}).annotations({ identifier: "Approval" })
export type Approval = typeof Approval.Type

export const ApprovalList = Schema.Struct({
  approvals: Schema.Array(Approval),
  has_more: Schema.Boolean
}).annotations({ identifier: "ApprovalList" })

export const ApprovalListParams = Schema.Struct({
  ...ListParams.fields,
  status: Schema.optional(ApprovalStatus)
})

export const DecisionRequest = Schema.Struct({
  note: Schema.optional(Schema.NullOr(Schema.String.pipe(Schema.maxLength(2000))))
})

// ---------------------------------------------------------------------------------------
// Disputes

/** The wire's dispute: the `Dispute` model's json variant with its signature (Domain/Dispute.ts). */
export { SignedDispute as Dispute } from "./Dispute.js"

export const DisputeDecisionRequest = Schema.Struct({
  decision: Schema.Literal("upheld", "rejected"),
  reason: Schema.optional(Schema.String.pipe(Schema.maxLength(2000)))
}).annotations({ identifier: "DisputeDecisionRequest" })

export const DisputeList = Schema.Struct({
  disputes: Schema.Array(SignedDispute),
  has_more: Schema.Boolean
})

export const DisputeListParams = Schema.Struct({
  ...ListParams.fields,
  status: Schema.optional(DisputeStatus)
})
