import { Model } from "@effect/sql"
import { Schema, Struct } from "effect"
import { AgentId, OrgId } from "./Ids.js"
import { AmountFromCredits } from "./Money.js"
import { LaterTimestampColumn, TimestampColumn } from "./Timestamps.js"

export const AgentMode = Schema.Literal("test", "live")
export const AgentStatus = Schema.Literal("active", "disabled")

/**
 * An agent, declared once: `Agent` decodes its row (the select variant), `Agent.insert` is a
 * new row, `Agent.json` the wire record (`monthly_budget` and `approval_threshold` as amount
 * objects, timestamps ISO 8601; the org and the key's hash stay off the wire). The key's
 * hash and issue time are written with the row and never read back with it.
 */
export class Agent extends Model.Class<Agent>("Agent")({
  id: Model.GeneratedByApp(AgentId),
  org_id: Model.FieldExcept("json", "jsonCreate", "jsonUpdate")(OrgId),
  name: Schema.String,
  mode: AgentMode,
  status: AgentStatus,
  /** Credits a calendar month (UTC). */
  monthly_budget_credits: Model.Field({
    select: Schema.BigInt,
    insert: Schema.BigInt,
    update: Schema.BigInt,
    json: Schema.propertySignature(AmountFromCredits).pipe(Schema.fromKey("monthly_budget"))
  }),
  /** Purchases above it wait for an owner's approval; null: never ask. */
  approval_threshold_credits: Model.Field({
    select: Schema.NullOr(Schema.BigInt),
    insert: Schema.NullOr(Schema.BigInt),
    update: Schema.NullOr(Schema.BigInt),
    json: Schema.propertySignature(Schema.NullOr(AmountFromCredits)).pipe(Schema.fromKey("approval_threshold"))
  }),
  /** A jsonb column: read as the array, written as its JSON text. */
  ip_allowlist: Model.Field({
    select: Schema.Array(Schema.String),
    insert: Schema.parseJson(Schema.Array(Schema.String)),
    update: Schema.parseJson(Schema.Array(Schema.String)),
    json: Schema.Array(Schema.String)
  }),
  key_prefix: Model.FieldExcept("update", "jsonCreate", "jsonUpdate")(
    Schema.NullOr(Schema.String).annotations({
      description: "First 12 characters of the agent key; null while the agent has no key (revoked)"
    })
  ),
  key_hash: Model.FieldOnly("insert")(Schema.String),
  key_issued_at: Model.FieldOnly("insert")(Schema.DateFromSelf),
  key_last_used_at: LaterTimestampColumn,
  created_at: TimestampColumn
}) {}

/** An agent as the rules see it (the gateway's key row): its mode, status, budget, threshold and allowlist. */
export const AgentRecord = Schema.Struct(
  Struct.pick(
    Agent.fields,
    "id",
    "org_id",
    "name",
    "mode",
    "status",
    "monthly_budget_credits",
    "approval_threshold_credits",
    "ip_allowlist"
  )
)
export type AgentRecord = typeof AgentRecord.Type

/** The wire's agent record. */
export const AgentJson = Agent.json.annotations({ identifier: "Agent", title: "Agent" })
