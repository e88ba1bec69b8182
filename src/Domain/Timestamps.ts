import { Model } from "@effect/sql"
import { Clock, Effect, Schema } from "effect"

/** A timestamp on the wire: ISO 8601 UTC with milliseconds. */
export const Timestamp = Schema.String.annotations({ description: "ISO 8601 UTC with milliseconds" })

/** A record's Date written as the wire's timestamp (`toISOString`), read back as a Date. */
export const TimestampFromDate = Schema.transform(Timestamp, Schema.DateFromSelf, {
  strict: true,
  decode: (text) => new Date(text),
  encode: (date) => date.toISOString()
})

/** A record's timestamp column written with its row: a Date in the row and the insert, ISO 8601 on the wire. */
export const TimestampColumn = Model.Field({
  select: Schema.DateFromSelf,
  insert: Schema.DateFromSelf,
  json: TimestampFromDate
})

/** A record's timestamp column filled later (null until then, never inserted): a Date or null in the row and on the wire. */
export const LaterTimestampColumn = Model.Field({
  select: Schema.NullOr(Schema.DateFromSelf),
  json: Schema.NullOr(TimestampFromDate)
})

/** The time now as a `Date`, from the `Clock` (tests move it): for a row's timestamp columns. */
export const currentDate: Effect.Effect<Date> = Effect.map(Clock.currentTimeMillis, (ms) => new Date(ms))
