import { SqlClient } from "@effect/sql"
import { Context, Effect, Schema } from "effect"
import { ServiceUnavailable } from "../../Errors/ApiErrors.js"
import { statementRows } from "../StatementRows.js"
import { Lifecycle } from "./Lifecycle.js"

/** The newest migration this version of the code needs (provided by the migrations layer). */
export class SchemaVersion extends Context.Tag("Lifecycle/SchemaVersion")<SchemaVersion, number>() {}

/**
 * Whether this replica takes new requests: not draining, its database answering within 2 s,
 * and every migration it needs applied (another replica may have rolled the schema back, or
 * a restore may predate it). Answers the admission state when ready.
 */
export class Readiness extends Effect.Service<Readiness>()("Lifecycle/Readiness", {
  effect: Effect.gen(function*() {
    const lifecycle = yield* Lifecycle
    const sql = yield* SqlClient.SqlClient
    const latestRows = statementRows(Schema.Struct({ latest: Schema.NullOr(Schema.Number) }))
    const needed = yield* SchemaVersion
    const check = Effect.gen(function*() {
      const state = yield* lifecycle.state
      if (state.draining) {
        return yield* new ServiceUnavailable({ message: "Shutting down: not taking new requests" })
      }
      const row = yield* latestRows.single(sql`SELECT max(migration_id) AS latest FROM effect_sql_migrations`).pipe(
        Effect.timeout("2 seconds"),
        Effect.mapError(() => new ServiceUnavailable({ message: "The database does not answer" }))
      )
      const applied = row.latest ?? 0
      if (applied < needed) {
        return yield* new ServiceUnavailable({
          message: `Migrations not applied: the database is at ${applied}, this version needs ${needed}`
        })
      }
      return state
    })
    return { check } as const
  })
}) {}
