import { Model } from "@effect/sql"
import { Schema } from "effect"
import { AnyJson } from "./Json.js"
import { TimestampFromDate } from "./Timestamps.js"

/** Records of the operator side that the HTTP contract and the services share. */

/**
 * One line of the administrators' audit log, declared once: `AuditEntry` decodes its row,
 * `AuditEntry.json` the wire record (the time ISO 8601). Lines are written by
 * `AuditLog.record` only, whose target states may hold bigints (kept as decimal text).
 */
export class AuditEntry extends Model.Class<AuditEntry>("AuditEntry")({
  id: Schema.String,
  admin_id: Schema.String,
  admin_email: Schema.String,
  action: Schema.String,
  target_type: Schema.String,
  target_id: Schema.String,
  reason: Schema.NullOr(Schema.String),
  before: Schema.NullOr(AnyJson),
  after: Schema.NullOr(AnyJson),
  created_at: Model.Field({ select: Schema.DateFromSelf, json: TimestampFromDate })
}) {}

/** The wire's audit line (no title: the wire record never had one, and the class would name it `AuditEntry.json`). */
export const AuditEntryJson = AuditEntry.json.annotations({ identifier: "AuditEntry", title: undefined })

/** A benchmark run (declared with its row in BenchmarkRun.ts). */
export { BenchmarkRunJson as BenchmarkRun } from "./BenchmarkRun.js"

export const SampleSetSummary = Schema.Struct({
  id: Schema.String,
  task_type: Schema.String,
  description: Schema.String,
  size: Schema.Int
}).annotations({ identifier: "SampleSet" })
