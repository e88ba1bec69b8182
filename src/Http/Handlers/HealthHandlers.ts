import { HttpApiBuilder } from "@effect/platform"
import { SqlClient } from "@effect/sql"
import { Effect } from "effect"
import { ServiceUnavailable } from "../../Errors/ApiErrors.js"
import { Lifecycle } from "../../Services/Lifecycle/Lifecycle.js"
import { LATEST_MIGRATION } from "../../Layers/migrations/index.js"
import { Api } from "../Api.js"

export const HealthHandlers = HttpApiBuilder.group(Api, "health", (handlers) =>
  Effect.gen(function*() {
    const lifecycle = yield* Lifecycle
    const sql = yield* SqlClient.SqlClient
    return handlers
      .handle("live", () => Effect.succeed({ status: "ok" as const }))
      .handle("ready", () =>
        Effect.gen(function*() {
          const state = yield* lifecycle.state
          if (state.draining) {
            return yield* new ServiceUnavailable({ message: "Shutting down: not taking new requests" })
          }
          const [row] = yield* sql<{ latest: number | null }>`
            SELECT max(migration_id) AS latest FROM effect_sql_migrations`.pipe(
            Effect.timeout("2 seconds"),
            Effect.mapError(() => new ServiceUnavailable({ message: "The database does not answer" }))
          )
          // Another replica may have rolled the schema back, or a restore may predate it.
          if ((row?.latest ?? 0) < LATEST_MIGRATION) {
            return yield* new ServiceUnavailable({
              message: `Migrations not applied: the database is at ${row?.latest ?? 0}, this version needs ${LATEST_MIGRATION}`
            })
          }
          return { status: "ok" as const, requests: { running: state.running, queued: state.queued } }
        }))
  }))
