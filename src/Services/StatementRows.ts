import { SqlSchema, type Statement } from "@effect/sql"
import type { SqlError } from "@effect/sql/SqlError"
import { Effect, Schema } from "effect"

/**
 * Decoded rows of a statement that is built per call (its fragments and parameters are not a
 * request schema): `const outcome = statementRows(HoldOutcome)` once, then
 * `outcome.single(sql\`...\`)`. The row decoders are made once, not on every call. `run`
 * runs the statement (default: the SQL client; a hot statement passes the runner of
 * `directStatements`, DirectStatements.ts).
 */
const AnyStatement = Schema.declare((value: unknown): value is Statement.Statement<unknown> => Effect.isEffect(value))

type Runner = (statement: Statement.Statement<unknown>) => Effect.Effect<ReadonlyArray<unknown>, SqlError>

const bySqlClient: Runner = (statement) => statement

export const statementRows = <A, I>(row: Schema.Schema<A, I>, run: Runner = bySqlClient) => ({
  all: SqlSchema.findAll({ Request: AnyStatement, Result: row, execute: run }),
  one: SqlSchema.findOne({ Request: AnyStatement, Result: row, execute: run }),
  single: SqlSchema.single({ Request: AnyStatement, Result: row, execute: run })
})
