import { Schema } from "effect"

/**
 * The daily recommend quota is used up. On the wire it is `plan_limit` like the other
 * plan limits, but with HTTP 429 (the specification's exception for daily quotas), so it
 * is its own class with its own wire schema (see Http/Groups/PurchasingErrors.ts).
 */
export class DailyQuotaExceeded extends Schema.TaggedError<DailyQuotaExceeded>()("DailyQuotaExceeded", {
  message: Schema.String
}) {}
