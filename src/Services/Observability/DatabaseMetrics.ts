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
