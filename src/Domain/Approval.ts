import { Model } from "@effect/sql"
import { Schema } from "effect"
import { ApprovalReason } from "./ApprovalSummary.js"
import { AgentId, ApprovalId, OrgId, UserId } from "./Ids.js"
import { AmountFromCredits } from "./Money.js"
import { TimestampColumn, TimestampFromDate } from "./Timestamps.js"

/** What an approval is now: its stored status, or expired once waiting (or approved and unused) past its expiry. */
export const ApprovalStatus = Schema.Literal("waiting", "approved", "rejected", "expired")
export type ApprovalStatus = typeof ApprovalStatus.Type

/** How an owner decided. */
export const DecidedVia = Schema.Literal("session", "org_key", "email_link")
export type DecidedVia = typeof DecidedVia.Type

const NullableDate = Model.Field({
  select: Schema.NullOr(Schema.DateFromSelf),
  update: Schema.NullOr(Schema.DateFromSelf),
  json: Schema.NullOr(TimestampFromDate)
})

/**
 * An owner's approval of a purchase, declared once: `PurchaseApproval` decodes its row read
 * with its tool (`tool_slug`, `tool_name`, `tool_provider` come from the join),
 * `.insert` is a new, waiting approval, and `.json` holds the wire fields that are the row's
 * (`amount` as the amount object, timestamps ISO 8601). The wire's `Approval`
 * (Domain/Purchasing.ts) is built from these fields and adds what is worked out: the status
 * now, the tool, whether it was used.
 */
export class PurchaseApproval extends Model.Class<PurchaseApproval>("PurchaseApproval")({
  id: Model.GeneratedByApp(ApprovalId),
  org_id: Model.FieldExcept("json", "jsonCreate", "jsonUpdate")(OrgId),
  agent_id: AgentId,
  tool_id: Schema.String,
  tool_slug: Model.FieldOnly("select")(Schema.String),
  tool_name: Model.FieldOnly("select")(Schema.String),
  tool_provider: Model.FieldOnly("select")(Schema.String),
  /** SHA-256 of the inputs' canonical JSON: what was approved, never shown. */
  inputs_hash: Model.FieldExcept("json", "jsonCreate", "jsonUpdate")(Schema.String),
  item_count: Schema.Int,
  amount_credits: Model.Field({
    select: Schema.BigInt,
    insert: Schema.BigInt,
    update: Schema.BigInt,
    json: Schema.propertySignature(AmountFromCredits).pipe(Schema.fromKey("amount"))
  }),
  reason: ApprovalReason,
  /** As stored; the wire's status also says expired (`effectiveStatus`). */
  status: Model.FieldExcept("json", "jsonCreate", "jsonUpdate")(Schema.Literal("waiting", "approved", "rejected")),
  note: Model.FieldExcept("insert", "jsonCreate")(Schema.NullOr(Schema.String)),
  decided_by: Model.FieldExcept("insert", "json", "jsonCreate", "jsonUpdate")(Schema.NullOr(UserId)),
  decided_by_email: Model.FieldExcept("insert", "jsonCreate")(Schema.NullOr(Schema.String)),
  decided_via: Model.FieldExcept("insert", "jsonCreate")(Schema.NullOr(DecidedVia)),
  created_at: TimestampColumn,
  expires_at: TimestampColumn,
  decided_at: NullableDate,
  receipt_id: Model.FieldExcept("insert", "jsonCreate")(Schema.NullOr(Schema.String)),
  used_at: Model.FieldExcept("insert", "json", "jsonCreate", "jsonUpdate")(Schema.NullOr(Schema.DateFromSelf))
}) {}
