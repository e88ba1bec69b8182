import { Model } from "@effect/sql"
import { Schema, Struct } from "effect"
import { BenchmarkRunId } from "./Ids.js"
import { LaterTimestampColumn, TimestampColumn } from "./Timestamps.js"

export const RunStatus = Schema.Literal("queued", "running", "done", "failed")

/**
 * A benchmark run, declared once: `BenchmarkRun` decodes its row (progress and running
 * totals), `BenchmarkRun.insert` queues a new one (its status `queued`). The worker's lease
 * columns are never read.
 * The wire record (`BenchmarkRunJson`) is not the row: it adds the progress and, once done,
 * the results computed from the totals, around the row's own fields in their wire form.
 */
export class BenchmarkRun extends Model.Class<BenchmarkRun>("BenchmarkRun")({
  id: Model.GeneratedByApp(BenchmarkRunId),
  tool_id: Schema.String,
  sample_set: Schema.String,
  started_by: Schema.String.annotations({ description: "The administrator's email, or `schedule`" }),
  status: RunStatus,
  /** Samples in the run; the totals below grow as chunks of them are done. */
  total: Model.FieldOnly("select", "insert")(Schema.Number),
  done: Model.FieldOnly("select")(Schema.Number),
  answered: Model.FieldOnly("select")(Schema.Number),
  correct: Model.FieldOnly("select")(Schema.Number),
  latencies_ms: Model.FieldOnly("select")(Schema.Array(Schema.Number)),
  cost_credits: Model.FieldOnly("select")(Schema.BigInt),
  check_version: Schema.String,
  failure: Model.Field({ select: Schema.NullOr(Schema.String), json: Schema.NullOr(Schema.String) }),
  created_at: TimestampColumn,
  started_at: LaterTimestampColumn,
  finished_at: LaterTimestampColumn
}) {}

const wire = BenchmarkRun.json.fields

/** What a finished run measured (null until it is done). */
export const BenchmarkResults = Schema.Struct({
  sample_size: Schema.Int,
  coverage: Schema.Number,
  accuracy: Schema.Number,
  latency_p50_ms: Schema.Number,
  latency_p95_ms: Schema.Number,
  cost_credits: Schema.String
})

/** The wire's benchmark run: the row's fields, its progress, and its results once done. */
export const BenchmarkRunJson = Schema.Struct({
  ...Struct.pick(wire, "id", "tool_id", "sample_set", "started_by", "status"),
  progress: Schema.Struct({ done: Schema.Int, total: Schema.Int }),
  check_version: wire.check_version,
  results: Schema.NullOr(BenchmarkResults),
  ...Struct.pick(wire, "failure", "created_at", "started_at", "finished_at")
}).annotations({ identifier: "BenchmarkRun" })
export type BenchmarkRunView = typeof BenchmarkRunJson.Type
