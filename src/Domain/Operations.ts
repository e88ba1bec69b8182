import { Schema } from "effect"
import { AnyJson } from "./Json.js"

/** Records of the operator side that the HTTP contract and the services share. */

/** One line of the administrators' audit log. */
export const AuditEntry = Schema.Struct({
  id: Schema.String,
  admin_id: Schema.String,
  admin_email: Schema.String,
  action: Schema.String,
  target_type: Schema.String,
  target_id: Schema.String,
  reason: Schema.NullOr(Schema.String),
  before: Schema.NullOr(AnyJson),
  after: Schema.NullOr(AnyJson),
  created_at: Schema.String
}).annotations({ identifier: "AuditEntry" })
export type AuditEntry = typeof AuditEntry.Type

/** An org's request to open an on-request gateway endpoint. */
export const OpeningRequest = Schema.Struct({
  id: Schema.String,
  org_id: Schema.String,
  endpoint_id: Schema.String,
  note: Schema.NullOr(Schema.String),
  status: Schema.Literal("pending", "opened", "declined"),
  created_at: Schema.String,
  decided_at: Schema.NullOr(Schema.String)
}).annotations({ identifier: "OpeningRequest" })

/** A benchmark run (declared with its row in BenchmarkRun.ts). */
export { BenchmarkRunJson as BenchmarkRun } from "./BenchmarkRun.js"

export const SampleSetSummary = Schema.Struct({
  id: Schema.String,
  task_type: Schema.String,
  description: Schema.String,
  size: Schema.Int
}).annotations({ identifier: "SampleSet" })
