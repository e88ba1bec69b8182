import { HttpApiBuilder } from "@effect/platform"
import { Effect } from "effect"
import { Readiness } from "../../Services/Lifecycle/Readiness.js"
import { Api } from "../Api.js"

export const HealthHandlers = HttpApiBuilder.group(Api, "health", (handlers) =>
  Effect.gen(function*() {
    const readiness = yield* Readiness
    return handlers
      .handle("live", () => Effect.succeed({ status: "ok" as const }))
      .handle("ready", () =>
        Effect.map(readiness.check, (state) => ({
          status: "ok" as const,
          requests: { running: state.running, queued: state.queued }
        })))
  }))
