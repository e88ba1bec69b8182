import { Metric } from "effect"

/**
 * Statements the service sends to PostgreSQL, counted by its pg client as each one goes out
 * (Layers/PreparedStatements.ts), transaction control and background work included:
 * `/metrics` prints it, and the gateway benchmark reads statements per call from it.
 */
export const statementsSent = Metric.counter("db_statements_total", {
  description: "SQL statements sent to PostgreSQL (BEGIN and COMMIT included)"
})

/** Counts one statement (called from the pg client, outside any fiber). */
export const countStatement = () => statementsSent.unsafeUpdate(1, [])

/**
 * Round trips to PostgreSQL: statements sent while the connection had none awaiting an
 * answer. Statements pipelined behind another (`sentTogether`, an eagerly answered BEGIN)
 * share its round trip; the gateway benchmark reads round trips per call from it.
 */
export const roundTrips = Metric.counter("db_round_trips_total", {
  description: "Round trips to PostgreSQL (statements sent while none awaited an answer on the connection)"
})

/** Counts one round trip (called from the pg client, outside any fiber). */
export const countRoundTrip = () => roundTrips.unsafeUpdate(1, [])
