import { Config, Effect } from "effect"

/**
 * What an operator sees by:
 * - METRICS_TOKEN: `/metrics` answers only with `Authorization: Bearer <token>`; unset, it
 *   answers 404 (the metrics stay private unless an operator opens them).
 * - ACCESS_LOG: one log line per request (default true).
 * Logging (LOG_LEVEL, LOG_FORMAT) is in Layers/Logging.ts, tracing (OTEL_*) in Layers/Telemetry.ts.
 */
export class ObservabilityConfig extends Effect.Service<ObservabilityConfig>()("Observability/ObservabilityConfig", {
  effect: Effect.gen(function*() {
    const metricsToken = yield* Config.option(Config.redacted("METRICS_TOKEN"))
    const accessLog = yield* Config.boolean("ACCESS_LOG").pipe(Config.withDefault(true))
    return { metricsToken, accessLog } as const
  })
}) {}
