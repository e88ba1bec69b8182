import { Model } from "@effect/sql"
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

/** A jsonb column: read as the value, written as its JSON text. */
const JsonColumn = <A, I>(schema: Schema.Schema<A, I>) =>
  Model.Field({ select: schema, insert: Schema.parseJson(schema), update: Schema.parseJson(schema), json: schema })

/** A column the wire's records compute from (the price, the check's parts, the adapter, the scheduled price). */
const offTheWire = Model.FieldExcept("json", "jsonCreate", "jsonUpdate")

/**
 * A tool, declared once: `Tool` decodes its row as the repository reads it (with its latest
 * benchmark's day and accuracy, computed by the same SELECT), `Tool.insert` and
 * `Tool.update` encode what is written (the input's fields as jsonb), `Tool.json` the fields
 * its wire records show as they are (`GET /v1/tools`, `ToolJson`, and the administrators'
 * record add the price, the gates and the benchmark, computed per time).
 */
export class Tool extends Model.Class<Tool>("ToolRow")({
  id: Schema.UUID,
  slug: Schema.String,
  name: Schema.String,
  provider: Schema.String,
  provider_name: Schema.String,
  task_type: TaskTypeId,
  description: Schema.String,
  price_per_success_credits: offTheWire(Schema.NullOr(Schema.BigInt)),
  status: ToolStatus,
  resale_rights: offTheWire(Schema.Boolean),
  gateway_endpoint: offTheWire(Schema.String),
  input: JsonColumn(ToolInput),
  check_id: offTheWire(Schema.String),
  check_version: offTheWire(Schema.String),
  check_verifies: offTheWire(Schema.String),
  paused_reason: Schema.NullOr(Schema.String),
  next_price_credits: offTheWire(Schema.NullOr(Schema.BigInt)),
  next_price_from: offTheWire(Schema.NullOr(Schema.DateFromSelf)),
  adapter_ok: offTheWire(Schema.NullOr(Schema.Boolean)),
  adapter_problem: offTheWire(Schema.NullOr(Schema.String)),
  /** The latest benchmark report's day and accuracy (null before the first). */
  latest_benchmark_date: Model.FieldOnly("select")(Schema.NullOr(Schema.String)),
  latest_accuracy: Model.FieldOnly("select")(Schema.NullOr(Schema.NumberFromString))
}) {}

/** A tool as kept in the data file: the model's descriptive fields, its price in credits, its check and benchmarks. */
export const ToolEntry = Schema.Struct({
  ...Struct.pick(
    Tool.fields,
    "id",
    "slug",
    "name",
    "provider",
    "provider_name",
    "task_type",
    "description",
    "status",
    "resale_rights",
    "gateway_endpoint",
    "input"
  ),
  price_per_success_credits: Schema.NullOr(Schema.Int),
  check: Check,
  benchmarks: Schema.NonEmptyArray(Benchmark)
})
export type ToolEntry = typeof ToolEntry.Type

/** The public tool record of `GET /v1/tools`: the model's wire fields and what is computed per time. */
export const ToolJson = Schema.Struct({
  id: Schema.String,
  ...Struct.pick(Tool.json.fields, "slug", "name", "provider", "provider_name", "task_type", "description"),
  price_per_success: Schema.NullOr(Amount),
  status: Tool.json.fields.status,
  purchasable: Schema.Boolean,
  unavailable_reasons: Schema.Array(Schema.String).annotations({
    description:
      "Why the tool is not sold now (empty when it is): tool_paused, information_only, or the publishing gates it fails (resale_rights_missing, price_missing, adapter_not_ready, benchmark_missing, below_accuracy_floor)"
  }),
  paused_reason: Tool.json.fields.paused_reason,
  input: Tool.json.fields.input,
  check: Check,
  latest_benchmark: Schema.NullOr(Benchmark).annotations({
    description: "The newest benchmark report; null until the tool is first benchmarked (it has no score until then)"
  })
}).annotations({ identifier: "Tool" })
export type ToolJson = typeof ToolJson.Type
