import { Schema } from "effect"

/** A timestamp on the wire: ISO 8601 UTC with milliseconds. */
export const Timestamp = Schema.String.annotations({ description: "ISO 8601 UTC with milliseconds" })

/** A record's Date written as the wire's timestamp (`toISOString`), read back as a Date. */
export const TimestampFromDate = Schema.transform(Timestamp, Schema.DateFromSelf, {
  strict: true,
  decode: (text) => new Date(text),
  encode: (date) => date.toISOString()
})
