import { HttpApiEndpoint, HttpApiGroup, HttpApiSchema, OpenApi } from "@effect/platform"
import { Schema } from "effect"
import { AgentRefusalJson, Day } from "../../Domain/AgentRefusal.js"
import { Amount } from "../../Domain/Money.js"
import { InvalidInput } from "../../Errors/ApiErrors.js"
import { wire } from "../../Errors/Wire.js"
import { OrgAuth } from "../Security/AuthTags.js"
import { OrgPath } from "./IdentitySchemas.js"

export const UsageQuery = Schema.Struct({
  from: Schema.optional(Day.annotations({ description: "First day (UTC, inclusive); default the 1st of this month" })),
  to: Schema.optional(
    Day.annotations({ description: "Last day (UTC, inclusive); default today. At most 366 days in all" })
  )
})

export const OrgUsage = Schema.Struct({
  org_id: Schema.String,
  balance: Amount,
  credits_frozen: Schema.Boolean,
  funded: Schema.Boolean.annotations({ description: "Whether the org has ever bought credits (its first top-up)" }),
  trial: Schema.NullOr(Schema.Struct({ credits: Amount, expires_at: Schema.String, expired: Schema.Boolean })),
  trial_limit: Schema.NullOr(Schema.Struct({
    per_hour: Amount,
    spent_this_hour: Amount,
    resets_at: Schema.String.annotations({ description: "The start of the next UTC hour" })
  })).annotations({
    description: "Until the first top-up, spend per UTC hour is capped (429 trial_limit); null once funded"
  }),
  live_purchases_open: Schema.Boolean.annotations({
    description: "Whether live agents' purchases run now; closed, they answer 501 live_execute_unavailable"
  }),
  range: Schema.Struct({ from: Day, to: Day }),
  total_spend: Amount.annotations({ description: "Live credits spent in the range, net of refunds" }),
  by_agent: Schema.Array(Schema.Struct({ agent_id: Schema.String, name: Schema.String, spend: Amount })).annotations({
    description: "Agents that spent in the range, most first"
  }),
  budgets: Schema.Array(Schema.Struct({
    agent_id: Schema.String,
    month: Schema.String.annotations({ description: "The calendar month (UTC) as YYYY-MM" }),
    spent: Amount,
    budget: Amount,
    remaining: Amount
  })).annotations({
    description:
      "Every agent's spend this calendar month (UTC) against its monthly budget, whatever the range, as the budget check counts it (and GET /v1/balance tells the agent): what was spent and what is held for calls and purchases under way; a test agent's priced calls and purchases count although no credits move"
  }),
  by_day: Schema.Array(Schema.Struct({ day: Day, spend: Amount })).annotations({
    description: "Every day of the range, days without spend included"
  }),
  test_activity: Schema.Struct({
    purchases: Schema.Int,
    items: Schema.Int,
    calls: Schema.Int,
    priced: Amount.annotations({ description: "What the test items and calls were priced at; no credits moved" })
  }).annotations({ description: "Test agents' purchases and calls in the range, kept apart from spend" }),
  refusals: Schema.Array(AgentRefusalJson).annotations({
    description:
      "Requests of each agent refused by a limit (trial, budget, balance, quota, rate...), per UTC day and code, latest first (at most 200 rows)"
  }),
  top_endpoints: Schema.Array(Schema.Struct({ endpoint: Schema.String, calls: Schema.Int, spend: Amount })).annotations(
    {
      description: "The ten gateway endpoints with the most spend"
    }
  ),
  top_tools: Schema.Array(
    Schema.Struct({ tool: Schema.String, name: Schema.String, items: Schema.Int, spend: Amount })
  ).annotations({ description: "The ten tools with the most spend (charged items)" })
}).annotations({ identifier: "OrgUsage" })

export const ExportPath = Schema.Struct({
  ...OrgPath.fields,
  dataset: Schema.Literal("calls", "receipts", "ledger", "usage").annotations({
    description:
      "calls: gateway calls; receipts: one row per receipt item, with its input and result where kept; ledger: balance entries; usage: spend, test activity and refusals per agent per day"
  })
})

export const ExportQuery = Schema.Struct({
  ...UsageQuery.fields,
  format: Schema.optional(
    Schema.Literal("csv", "jsonl").annotations({
      description: "csv (default; a header row) or jsonl (one JSON object a line, application/x-ndjson)"
    })
  )
})

/** Where the org's money goes: members and org keys (read is enough). */
export class UsageGroup extends HttpApiGroup.make("usage")
  .add(
    HttpApiEndpoint.get("get", "/v1/orgs/:orgId/usage")
      .annotateContext(
        OpenApi.annotations({
          summary: "Org balance and usage",
          description:
            "Balance, trial and its hourly limit, frozen state, spend per agent and per day, test activity apart from spend, the agents' refusals per day and code, and the top endpoints and tools by spend over a date range (default: this month)."
        })
      )
      .setPath(OrgPath)
      .setUrlParams(UsageQuery)
      .addSuccess(OrgUsage)
      .addError(wire(InvalidInput))
  )
  .add(
    HttpApiEndpoint.get("export", "/v1/orgs/:orgId/exports/:dataset")
      .annotateContext(
        OpenApi.annotations({
          summary: "Export calls, receipts, ledger or usage",
          description:
            "The org's gateway calls, receipt items (with input and result where kept), ledger entries or daily usage over a range of UTC days (default: this month), as CSV or JSON Lines, streamed as the rows are read."
        })
      )
      .setPath(ExportPath)
      .setUrlParams(ExportQuery)
      .addSuccess(
        HttpApiSchema.Text({ contentType: "text/csv" }).annotations({
          description:
            "The rows of the range, oldest first, streamed as they are read (any size); with format=jsonl, JSON Lines instead"
        })
      )
      .addError(wire(InvalidInput))
  )
  .middleware(OrgAuth)
  .annotateContext(OpenApi.annotations({
    title: "Usage",
    description: "The org's balance and where its credits went, per agent, per day, per endpoint and per tool."
  }))
{}
