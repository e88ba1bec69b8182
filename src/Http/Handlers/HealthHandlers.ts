import { HttpApiBuilder } from "@effect/platform"
import { SqlClient } from "@effect/sql"
import { Effect } from "effect"
import { ServiceUnavailable } from "../../Errors/ApiErrors.js"
import { Lifecycle } from "../../Services/Lifecycle/Lifecycle.js"
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
          yield* sql`SELECT 1`.pipe(
            Effect.timeout("2 seconds"),
            Effect.mapError(() => new ServiceUnavailable({ message: "The database does not answer" }))
          )
          return { status: "ok" as const, requests: { running: state.running, queued: state.queued } }
        }))
  }))
