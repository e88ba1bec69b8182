import { Model } from "@effect/sql"
import { Schema } from "effect"
import { inrPerUsd } from "./Billing.js"

/** A `date` column read as the day it names (`YYYY-MM-DD`), in whichever form the driver gives it. */
export const DayFromColumn = Schema.transform(Schema.Union(Schema.String, Schema.DateFromSelf), Schema.String, {
  strict: true,
  decode: (value) => (typeof value === "string" ? value.slice(0, 10) : value.toISOString().slice(0, 10)),
  encode: (day) => day
})

/**
 * A day's USD and INR reference rates against EUR, as the ECB published them (decimal text,
 * exact), and when we fetched them. Not a wire record: the billing summary shows the rate
 * with whether it is fresh enough to charge with.
 */
export class FxRate extends Model.Class<FxRate>("FxRate")({
  /** The ECB's reference date of the rates. */
  rate_date: Model.Field({ select: DayFromColumn, insert: Schema.String }),
  usd_per_eur: Schema.String,
  inr_per_eur: Schema.String,
  fetched_at: Model.Field({ select: Schema.DateFromSelf, insert: Schema.DateFromSelf })
}) {
  /** INR per USD, four decimals (the rate a payment records and converts with). */
  get inr_per_usd(): string {
    return inrPerUsd(this.usd_per_eur, this.inr_per_eur)!
  }
}
