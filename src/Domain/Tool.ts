import { Schema, Struct } from "effect"
import { Amount } from "./Money.js"
import { TaskTypeId } from "./TaskType.js"

/** Tools: real provider offerings for a task type, with their published check and benchmarks. */
export const ToolStatus = Schema.Literal("live", "paused", "information_only").annotations({
  identifier: "ToolStatus"
})
export type ToolStatus = typeof ToolStatus.Type

export const Check = Schema.Struct({
  id: Schema.String,
  version: Schema.String,
  verifies: Schema.String
}).annotations({ identifier: "Check" })
export type Check = typeof Check.Type

export const Benchmark = Schema.Struct({
  date: Schema.String,
  sample_size: Schema.Int,
  accuracy: Schema.Number,
  coverage: Schema.Number,
  latency_p50_ms: Schema.Int,
  latency_p95_ms: Schema.Int
}).annotations({ identifier: "Benchmark" })
export type Benchmark = typeof Benchmark.Type

/** The fields an input of a tool takes (each input: the required ones as non-empty text). */
export const ToolInput = Schema.Struct({ required: Schema.Array(Schema.String), optional: Schema.Array(Schema.String) })

/** A tool as kept in the data file and the database. */
export const ToolEntry = Schema.Struct({
  id: Schema.UUID,
  slug: Schema.String,
  name: Schema.String,
  provider: Schema.String,
  provider_name: Schema.String,
  task_type: TaskTypeId,
  description: Schema.String,
  price_per_success_credits: Schema.NullOr(Schema.Int),
  status: ToolStatus,
  resale_rights: Schema.Boolean,
  gateway_endpoint: Schema.String,
  input: ToolInput,
  check: Check,
  benchmarks: Schema.NonEmptyArray(Benchmark)
})
export type ToolEntry = typeof ToolEntry.Type

/** The public tool record of `GET /v1/tools`. */
export const Tool = Schema.Struct({
  id: Schema.String,
  ...Struct.pick(ToolEntry.fields, "slug", "name", "provider", "provider_name", "task_type", "description"),
  price_per_success: Schema.NullOr(Amount),
  status: ToolStatus,
  purchasable: Schema.Boolean,
  unavailable_reasons: Schema.Array(Schema.String).annotations({
    description:
      "Why the tool is not sold now (empty when it is): tool_paused, information_only, or the publishing gates it fails (resale_rights_missing, price_missing, adapter_not_ready, benchmark_missing, below_accuracy_floor)"
  }),
  paused_reason: Schema.NullOr(Schema.String),
  input: ToolInput,
  check: Check,
  latest_benchmark: Schema.NullOr(Benchmark).annotations({
    description: "The newest benchmark report; null until the tool is first benchmarked (it has no score until then)"
  })
}).annotations({ identifier: "Tool" })
export type Tool = typeof Tool.Type
