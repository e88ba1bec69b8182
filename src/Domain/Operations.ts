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

/** A benchmark run: a durable job with its progress, and its results once done. */
export const BenchmarkRun = Schema.Struct({
  id: Schema.String,
  tool_id: Schema.String,
  sample_set: Schema.String,
  started_by: Schema.String.annotations({ description: "The administrator's email, or `schedule`" }),
  status: Schema.Literal("queued", "running", "done", "failed"),
  progress: Schema.Struct({ done: Schema.Int, total: Schema.Int }),
  check_version: Schema.String,
  results: Schema.NullOr(Schema.Struct({
    sample_size: Schema.Int,
    coverage: Schema.Number,
    accuracy: Schema.Number,
    latency_p50_ms: Schema.Number,
    latency_p95_ms: Schema.Number,
    cost_credits: Schema.String
  })),
  failure: Schema.NullOr(Schema.String),
  created_at: Schema.String,
  started_at: Schema.NullOr(Schema.String),
  finished_at: Schema.NullOr(Schema.String)
}).annotations({ identifier: "BenchmarkRun" })

export const SampleSetSummary = Schema.Struct({
  id: Schema.String,
  task_type: Schema.String,
  description: Schema.String,
  size: Schema.Int
}).annotations({ identifier: "SampleSet" })
