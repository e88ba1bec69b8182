import { SqlSchema, type Statement } from "@effect/sql"
import { Effect, Schema } from "effect"

/**
 * Decoded rows of a statement that is built per call (its fragments and parameters are not a
 * request schema): `const claimed = statementRows(ClaimedMail)` once, then
 * `claimed.all(sql\`...\`)`. The row decoders are made once, not on every call. The statement
 * runs through the SQL client, as every statement does.
 */
const AnyStatement = Schema.declare((value: unknown): value is Statement.Statement<unknown> => Effect.isEffect(value))

export const statementRows = <A, I>(row: Schema.Schema<A, I>) => ({
  all: SqlSchema.findAll({ Request: AnyStatement, Result: row, execute: (statement) => statement }),
  one: SqlSchema.findOne({ Request: AnyStatement, Result: row, execute: (statement) => statement }),
  single: SqlSchema.single({ Request: AnyStatement, Result: row, execute: (statement) => statement })
})
