import { HttpApiEndpoint, HttpApiGroup, HttpApiSchema, OpenApi } from "@effect/platform"
import { Schema } from "effect"
import { Availability, CatalogueEndpointJson, Category } from "../../Domain/Catalogue.js"
import { EmailAddress } from "../../Domain/Email.js"
import { ScorePartsSchema } from "../../Domain/Formula.js"
import { Amount } from "../../Domain/Money.js"
import { PlanId } from "../../Domain/Plans.js"
import { TaskType, TaskTypeId } from "../../Domain/TaskType.js"
import { Benchmark, ToolJson } from "../../Domain/Tool.js"
import { IpNotAllowed, Unauthenticated } from "../../Errors/ApiErrors.js"
import { wire } from "../../Errors/Wire.js"
import { PublicRateLimit, WaitlistRateLimit } from "../Security/RateLimitTags.js"

/** Public data: no credential, 120 requests a minute per address. */
export const ToolList = Schema.Struct({ tools: Schema.Array(ToolJson) })

export const ScoreEntry = Schema.Struct({
  tool_id: Schema.String,
  slug: Schema.String,
  name: Schema.String,
  task_type: TaskTypeId,
  rank: Schema.Int,
  score: Schema.Number,
  parts: ScorePartsSchema,
  purchasable: Schema.Boolean
}).annotations({ identifier: "ScoreEntry" })

export const ScoreList = Schema.Struct({ formula_version: Schema.String, scores: Schema.Array(ScoreEntry) })

export const TaskTypeList = Schema.Struct({ task_types: Schema.Array(TaskType) })

export const PlanPricing = Schema.Struct({
  id: PlanId,
  name: Schema.String,
  monthly_fee_usd: Schema.String,
  daily_score_lookups: Schema.NullOr(Schema.Int),
  daily_free_text_lookups: Schema.NullOr(Schema.Int),
  gateway_price_multiplier: Schema.String,
  max_active_agents: Schema.Int,
  max_seats: Schema.Int
})

export const Pricing = Schema.Struct({
  credit: Schema.Struct({ usd: Schema.String, note: Schema.String }),
  plans: Schema.Array(PlanPricing),
  gateway_price_rule: Schema.String,
  trial: Schema.Struct({
    credits: Amount,
    days: Schema.Int,
    hourly_spend_limit: Amount,
    note: Schema.String
  }),
  founding_offer: Schema.Struct({
    id: Schema.String,
    name: Schema.String,
    description: Schema.String,
    plan: PlanId,
    monthly_fee_usd: Schema.String,
    total: Schema.Int,
    taken: Schema.Int,
    remaining: Schema.Int,
    ends_at: Schema.String,
    status: Schema.Literal("open", "sold_out", "ended")
  }),
  top_up: Schema.Struct({
    min: Amount,
    max: Amount,
    currencies: Schema.Array(Schema.Literal("usd", "inr")),
    new_account_cap: Amount,
    new_account_cap_days: Schema.Int
  }),
  limits: Schema.Struct({
    webhook_endpoints_per_org: Schema.Int,
    org_keys_per_org: Schema.Int,
    open_disputes_per_org: Schema.Int,
    people_lookups_per_domain_per_day: Schema.Int,
    new_account_topup_cap_usd: Schema.String,
    new_account_topup_cap_days: Schema.Int
  })
}).annotations({ identifier: "Pricing" })

export const Formula = Schema.Struct({
  version: Schema.String,
  summary: Schema.String,
  inputs: Schema.Record({ key: Schema.String, value: Schema.String }),
  parts: Schema.Record({ key: Schema.String, value: Schema.String }),
  weights: Schema.Record({ key: Schema.String, value: Schema.Int }),
  weighted: Schema.String,
  score: Schema.String,
  rounding: Schema.String,
  ranking: Schema.String,
  purchasable: Schema.String
}).annotations({ identifier: "Formula" })

export const Report = Schema.Struct({
  tool_id: Schema.String,
  tool_slug: Schema.String,
  tool_name: Schema.String,
  task_type: TaskTypeId,
  ...Benchmark.fields,
  check_version: Schema.String,
  measured_by_run: Schema.NullOr(Schema.String).annotations({
    description: "The benchmark run that measured this report (null for reports shipped with the service)"
  }),
  cost_credits: Schema.NullOr(Schema.String).annotations({
    description: "What the run's passing answers cost at the tool's price (measured reports)"
  })
}).annotations({ identifier: "BenchmarkReport" })

export const ReportList = Schema.Struct({ reports: Schema.Array(Report) })

export const ServiceStatus = Schema.Struct({
  status: Schema.Literal("ok", "degraded"),
  version: Schema.String,
  time: Schema.String,
  database: Schema.Struct({ status: Schema.Literal("ok", "unavailable"), latency_ms: Schema.NullOr(Schema.Number) }),
  catalogue: Schema.Struct({
    providers: Schema.Int,
    endpoints: Schema.Int,
    live: Schema.Int,
    on_request: Schema.Int,
    categories: Schema.Int
  }),
  tools: Schema.Struct({ count: Schema.Int, purchasable: Schema.Int, task_types: Schema.Int }),
  rate_limits: Schema.Struct({
    store: Schema.Literal("memory", "redis", "memory_fallback").annotations({
      description:
        "Where rate-limit counters are kept: this replica's memory, Redis, or memory while Redis is unreachable"
    })
  })
}).annotations({ identifier: "ServiceStatus" })

export const EndpointList = Schema.Struct({ endpoints: Schema.Array(CatalogueEndpointJson) })

export const EndpointSearch = Schema.Struct({
  q: Schema.optional(Schema.String.annotations({ description: "Words that must all match the id, provider or name" })),
  category: Schema.optional(Category.annotations({ description: "Only endpoints of this category" })),
  provider: Schema.optional(Schema.String.annotations({ description: "Provider id" })),
  availability: Schema.optional(
    Availability.annotations({
      description:
        "live: callable now; on request: opened per customer on request (answers 409 endpoint_on_request until then)"
    })
  ),
  plan: Schema.optional(PlanId.annotations({
    description: "Prices for this plan (default Pay as you go); an agent key's own plan wins"
  }))
})

export class PublicGroup extends HttpApiGroup.make("public")
  .add(
    HttpApiEndpoint.get("tools", "/v1/tools")
      .annotateContext(
        OpenApi.annotations({
          summary: "List tools",
          description: "Every tool with its task type, price per success and whether it can be bought now."
        })
      ).addSuccess(ToolList)
  )
  .add(
    HttpApiEndpoint.get("scores", "/v1/scores")
      .annotateContext(
        OpenApi.annotations({
          summary: "Tool scores",
          description: "Measured quality per tool (accuracy, coverage, latency), optionally for one task type."
        })
      )
      .setUrlParams(Schema.Struct({ task_type: Schema.optional(TaskTypeId) }))
      .addSuccess(ScoreList)
  )
  .add(
    HttpApiEndpoint.get("taskTypes", "/v1/task-types")
      .annotateContext(
        OpenApi.annotations({
          summary: "List task types",
          description: "The seven task types, with their input and output fields and the published check."
        })
      ).addSuccess(TaskTypeList)
  )
  .add(
    HttpApiEndpoint.get("pricing", "/v1/pricing")
      .annotateContext(
        OpenApi.annotations({
          summary: "Plans and prices",
          description: "The plans with their fees, allowances and limits, and the price of a credit."
        })
      ).addSuccess(Pricing)
  )
  .add(
    HttpApiEndpoint.get("formula", "/v1/formula")
      .annotateContext(
        OpenApi.annotations({
          summary: "Recommendation formula",
          description: "How recommend ranks tools: the published weights and terms."
        })
      ).addSuccess(Formula)
  )
  .add(
    HttpApiEndpoint.get("reports", "/v1/reports")
      .annotateContext(
        OpenApi.annotations({
          summary: "Benchmark reports",
          description: "The latest benchmark report of each tool, with sample size and check version."
        })
      ).addSuccess(ReportList)
  )
  .add(
    HttpApiEndpoint.get("status", "/v1/status")
      .annotateContext(
        OpenApi.annotations({
          summary: "Service status",
          description: "Whether the service and its parts are up, with the rate-limit store's state."
        })
      ).addSuccess(ServiceStatus)
  )
  .add(
    HttpApiEndpoint.get("endpoints", "/v1/endpoints")
      .setUrlParams(EndpointSearch)
      .addSuccess(EndpointList)
      // With an agent key, prices are for its org's plan; a bad key is refused, not ignored.
      .addError(wire(Unauthenticated))
      .addError(wire(IpNotAllowed))
      .annotateContext(OpenApi.annotations({
        summary: "Gateway endpoint catalogue",
        description:
          "Searches the catalogue of provider endpoints: every word of `q` must match the id, provider or name. Answers each endpoint's method, path, path_params and price_per_call (credits). No credential needed: prices are for Pay as you go; with an agent key, for the agent's org plan."
      }))
  )
  .middleware(PublicRateLimit)
  .annotateContext(OpenApi.annotations({ title: "Public data", description: "No credential needed." }))
{}

export const WaitlistRequest = Schema.Struct({ email: EmailAddress })

export class WaitlistGroup extends HttpApiGroup.make("waitlist")
  .add(
    HttpApiEndpoint.post("join", "/v1/waitlist")
      .annotateContext(
        OpenApi.annotations({
          summary: "Join the waitlist",
          description: "Leaves an email address for an invitation; answers the same whether or not it was new."
        })
      )
      .setPayload(WaitlistRequest)
      .addSuccess(Schema.Struct({ status: Schema.Literal("on_waitlist") }), { status: 202 })
  )
  .middleware(WaitlistRateLimit)
  .annotateContext(
    OpenApi.annotations({ title: "Waitlist", description: "Ask for an invitation while sign-up is closed." })
  )
{}

export const HtmlPage = HttpApiSchema.Text({ contentType: "text/html; charset=utf-8" })

export class DocsGroup extends HttpApiGroup.make("docs")
  .add(
    HttpApiEndpoint.get("errors", "/docs/errors")
      .annotateContext(
        OpenApi.annotations({
          summary: "Error code page",
          description: "An HTML page listing every error code with its status, meaning and retry rule."
        })
      ).addSuccess(HtmlPage)
  )
  .add(
    HttpApiEndpoint.get("webhookEventSchema", "/schemas/webhook-event.json")
      .annotateContext(
        OpenApi.annotations({
          summary: "Webhook event schema",
          description: "The JSON Schema of the body of every webhook delivery."
        })
      ).addSuccess(Schema.Unknown)
  )
  .annotateContext(
    OpenApi.annotations({
      title: "Documentation",
      description: "Human-readable error codes and the webhook event schema."
    })
  )
{}
