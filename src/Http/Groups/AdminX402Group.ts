import { HttpApiEndpoint, HttpApiGroup, HttpApiSchema, OpenApi } from "@effect/platform"
import { Schema } from "effect"
import { Day } from "../../Domain/AgentRefusal.js"
import { InvalidInput } from "../../Errors/ApiErrors.js"
import { wire } from "../../Errors/Wire.js"
import { AdminAuth } from "../Security/AuthTags.js"
import { ExportQuery, UsageQuery } from "./UsageGroup.js"

/** x402 revenue and payments for administrators (Services/X402/X402Reports.ts). */
const Units = Schema.String.annotations({ description: "Asset units (the token's smallest unit), a whole number" })

export const X402Revenue = Schema.Struct({
  from: Day,
  to: Day,
  settled_units: Units,
  by_day: Schema.Array(Schema.Struct({
    day: Day,
    kind: Schema.Literal("call", "purchase"),
    payments: Schema.Int,
    settled_units: Units,
    payers: Schema.Int
  })),
  by_status: Schema.Array(Schema.Struct({
    status: Schema.Literal("running", "due", "settled", "nothing_due", "abandoned", "refused"),
    payments: Schema.Int,
    settled_units: Units
  }))
}).annotations({ identifier: "X402Revenue" })

export class AdminX402Group extends HttpApiGroup.make("adminX402")
  .add(
    HttpApiEndpoint.get("revenue", "/admin/x402/revenue")
      .annotateContext(OpenApi.annotations({
        summary: "x402 revenue",
        description:
          "What keyless payers settled per UTC day and kind (calls, purchases) over a range of days (default: this month), and the range's payments by status."
      }))
      .setUrlParams(UsageQuery)
      .addSuccess(X402Revenue)
      .addError(wire(InvalidInput))
  )
  .add(
    HttpApiEndpoint.get("export", "/admin/x402/payments/export")
      .annotateContext(OpenApi.annotations({
        summary: "Export x402 payments",
        description:
          "Every x402 payment of a range of UTC days (default: this month), oldest first: payer, what was bought, status, amounts authorised, due and settled, transaction; as CSV or JSON Lines, streamed as the rows are read."
      }))
      .setUrlParams(ExportQuery)
      .addSuccess(
        HttpApiSchema.Text({ contentType: "text/csv" }).annotations({
          description: "The payments of the range, oldest first; with format=jsonl, JSON Lines instead"
        })
      )
      .addError(wire(InvalidInput))
  )
  .middleware(AdminAuth)
  .annotateContext(OpenApi.annotations({
    title: "Administrators: x402",
    description: "An administrator's session. Payments made per request by callers without a key."
  }))
{}
