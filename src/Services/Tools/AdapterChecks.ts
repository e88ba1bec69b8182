import { Config, Duration, Effect, Layer, Schedule } from "effect"
import { ToolAdmin } from "./ToolAdmin.js"

/**
 * Checks the adapter of every live tool every ADAPTER_CHECK_INTERVAL_MS (default 10
 * minutes, first after one interval): a failed check makes the tool unavailable
 * (`adapter_not_ready` in GET /v1/tools, 409 tool_unavailable on execute) until one passes.
 */
export const AdapterChecksLive = Layer.scopedDiscard(Effect.gen(function*() {
  const tools = yield* ToolAdmin
  const everyMs = yield* Config.integer("ADAPTER_CHECK_INTERVAL_MS").pipe(Config.withDefault(600_000))
  yield* tools.sweep.pipe(
    Effect.catchAllCause((cause) => Effect.logWarning("Adapter checks failed", cause)),
    Effect.repeat(Schedule.spaced(Duration.millis(everyMs))),
    Effect.delay(Duration.millis(everyMs)),
    Effect.forkScoped
  )
}))
