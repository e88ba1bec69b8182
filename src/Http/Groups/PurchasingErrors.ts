import { HttpApiSchema } from "@effect/platform"
import { Effect, FiberRef, ParseResult, Schema } from "effect"
import { errorCatalogue } from "../../Errors/ErrorCatalogue.js"
import { currentDocsBaseUrl, docUrlFor } from "../../Errors/Wire.js"
import { DailyQuotaExceeded } from "../../Services/Purchasing/Errors.js"

/**
 * The daily recommend quota on the wire: code `plan_limit` (the catalogue's entry) with
 * HTTP 429 instead of the catalogue's 402, as the specification says for daily quotas.
 */
export const dailyQuotaWire = Schema.transformOrFail(
  Schema.Struct({
    error: Schema.Struct({
      code: Schema.Literal("plan_limit"),
      message: Schema.String,
      doc_url: Schema.String,
      retryable: Schema.Boolean
    })
  }),
  DailyQuotaExceeded,
  {
    strict: false,
    decode: (body) => ParseResult.succeed({ _tag: "DailyQuotaExceeded" as const, message: body.error.message }),
    encode: (error) =>
      Effect.map(FiberRef.get(currentDocsBaseUrl), (baseUrl) => ({
        error: {
          code: "plan_limit" as const,
          message: error.message,
          doc_url: docUrlFor(baseUrl, "plan_limit"),
          retryable: errorCatalogue.plan_limit.retryable
        }
      }))
  }
).annotations({
  ...HttpApiSchema.annotations({ status: 429 }),
  identifier: "Error_plan_limit_daily",
  description: "Daily recommend quota used up; resets 00:00 UTC."
})
