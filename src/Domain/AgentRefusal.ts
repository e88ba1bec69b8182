import { Model } from "@effect/sql"
import { Schema } from "effect"
import { AgentId, OrgId } from "./Ids.js"
import { TimestampFromDate } from "./Timestamps.js"

/** A UTC day on the wire, YYYY-MM-DD. */
export const Day = Schema.String.annotations({ description: "A UTC day, YYYY-MM-DD", examples: ["2026-11-01"] })

/**
 * The refusals of one agent on one UTC day with one code (`agent_refusals`), read with the
 * agent's name: `AgentRefusal` decodes the row (its day as text), `.json` is the wire's
 * entry of a usage answer (the org stays off the wire). Counts are written by
 * `Usage/Refusals.ts`, in batches added to what is there, never from a record.
 */
export class AgentRefusal extends Model.Class<AgentRefusal>("AgentRefusal")({
  org_id: Model.FieldExcept("json", "jsonCreate", "jsonUpdate")(OrgId),
  agent_id: AgentId,
  /** From the agent. */
  name: Schema.String,
  day: Day,
  code: Schema.String.annotations({ description: "The error code the agent was answered" }),
  count: Schema.Int,
  last_at: Model.Field({ select: Schema.DateFromSelf, json: TimestampFromDate }),
  last_message: Schema.String
}) {}

/** The wire's refusal entry (no name of its own in the document: it sits inside `OrgUsage`). */
export const AgentRefusalJson = AgentRefusal.json.annotations({ title: undefined })
