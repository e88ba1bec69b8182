import { Config, Effect, Layer, Logger, LogLevel } from "effect"

/**
 * Logging for the whole process:
 * - LOG_LEVEL: the lowest level written (default Info);
 * - LOG_FORMAT: `text` (default, `key=value` lines) or `json` (one JSON object per line,
 *   annotations such as `request_id` as fields), for log collectors.
 */
export const LoggingLive = Layer.unwrapEffect(
  Effect.gen(function*() {
    const level = yield* Config.logLevel("LOG_LEVEL").pipe(Config.withDefault(LogLevel.Info))
    const format = yield* Config.literal("text", "json")("LOG_FORMAT").pipe(Config.withDefault("text" as const))
    return Layer.merge(Logger.minimumLogLevel(level), format === "json" ? Logger.json : Layer.empty)
  })
)
