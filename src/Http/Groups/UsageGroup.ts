import { HttpApiEndpoint, HttpApiGroup, OpenApi } from "@effect/platform"
import { Schema } from "effect"
import { Amount } from "../../Domain/Money.js"
import { InvalidInput } from "../../Errors/ApiErrors.js"
import { wire } from "../../Errors/Wire.js"
import { OrgAuth } from "../Security/AuthTags.js"
import { OrgPath } from "./IdentitySchemas.js"

const Day = Schema.String.annotations({ description: "A UTC day, YYYY-MM-DD", examples: ["2026-11-01"] })

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
  trial: Schema.NullOr(Schema.Struct({ credits: Amount, expires_at: Schema.String, expired: Schema.Boolean })),
  range: Schema.Struct({ from: Day, to: Day }),
  total_spend: Amount.annotations({ description: "Live credits spent in the range, net of refunds" }),
  by_agent: Schema.Array(Schema.Struct({ agent_id: Schema.String, name: Schema.String, spend: Amount })).annotations({
    description: "Agents that spent in the range, most first"
  }),
  by_day: Schema.Array(Schema.Struct({ day: Day, spend: Amount })).annotations({
    description: "Every day of the range, days without spend included"
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

/** Where the org's money goes: members and org keys (read is enough). */
export class UsageGroup extends HttpApiGroup.make("usage")
  .add(
    HttpApiEndpoint.get("get", "/v1/orgs/:orgId/usage")
      .setPath(OrgPath)
      .setUrlParams(UsageQuery)
      .addSuccess(OrgUsage)
      .addError(wire(InvalidInput))
  )
  .middleware(OrgAuth)
  .annotateContext(OpenApi.annotations({
    title: "Usage",
    description: "The org's balance and where its credits went, per agent, per day, per endpoint and per tool."
  }))
{}
