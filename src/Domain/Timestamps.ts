import { Schema } from "effect"

/** A timestamp column as the wire's ISO 8601 UTC with milliseconds. */
export const iso = (value: Date | string): string => new Date(value).toISOString()

export const isoOrNull = (value: Date | string | null): string | null => (value === null ? null : iso(value))

/** A timestamp on the wire: ISO 8601 UTC with milliseconds. */
export const Timestamp = Schema.String.annotations({ description: "ISO 8601 UTC with milliseconds" })

/** A record's Date written as the wire's timestamp (`toISOString`), read back as a Date. */
export const TimestampFromDate = Schema.transform(Timestamp, Schema.DateFromSelf, {
  strict: true,
  decode: (text) => new Date(text),
  encode: (date) => date.toISOString()
})
