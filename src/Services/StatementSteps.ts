import type { SqlClient, Statement } from "@effect/sql"

/**
 * Data-modifying statements joined into one as CTEs, `name_0 AS (...), name_1 AS (...)`,
 * after `prefix` (`WITH` to open a statement, `,` to go on after other CTEs); nothing at all
 * when there are none. PostgreSQL runs each to completion whether or not it is read.
 */
export const namedSteps = (
  sql: SqlClient.SqlClient,
  prefix: "WITH" | ",",
  name: string,
  statements: ReadonlyArray<Statement.Fragment>
) => sql.csv(prefix, statements.map((statement, i) => sql`${sql(`${name}_${i}`)} AS (${statement})`))
