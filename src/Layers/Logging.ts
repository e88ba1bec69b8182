import { Config, Effect, Layer, Logger, LogLevel, Option } from "effect"
import { type LineWriter, LogLineSink, makeLineWriter } from "./LogLines.js"

type LogFormat = "text" | "json"

/** The line a writer adds when it had to drop lines, in the log's own format. */
const droppedLine = (format: LogFormat) => (count: number) => {
  const message = `${count} log lines dropped: the log reader fell behind`
  const timestamp = new Date().toISOString()
  return format === "json"
    ? JSON.stringify({ message, logLevel: "WARN", timestamp, annotations: {}, spans: {} })
    : `timestamp=${timestamp} level=WARN message="${message}"`
}

let stdout: LineWriter | undefined

/** The process's one writer of log lines to stdout; what is queued at exit is written before it. */
const stdoutLines = (format: LogFormat) => {
  if (stdout === undefined) {
    const writer = makeLineWriter(1, { droppedLine: droppedLine(format) })
    process.once("exit", writer.flushSync)
    stdout = writer
  }
  return stdout
}

/**
 * Logging for the whole process:
 * - LOG_LEVEL: the lowest level written (default Info);
 * - LOG_FORMAT: `text` (default, `key=value` lines) or `json` (one JSON object per line,
 *   annotations such as `request_id` as fields), for log collectors.
 * Lines are Effect's own formats, written to stdout without blocking the event loop
 * (LogLines.ts; to a `LogLineSink` instead when one is provided); the layer's end waits
 * until they are all out.
 */
export const LoggingLive = Layer.unwrapScoped(
  Effect.gen(function*() {
    const level = yield* Config.logLevel("LOG_LEVEL").pipe(Config.withDefault(LogLevel.Info))
    const format = yield* Config.literal("text", "json")("LOG_FORMAT").pipe(Config.withDefault("text" as const))
    const sink = yield* Effect.serviceOption(LogLineSink)
    const lines = Option.isSome(sink) ? sink.value : stdoutLines(format)
    if (Option.isNone(sink)) yield* Effect.addFinalizer(() => Effect.promise(stdoutLines(format).drained))
    const formatted = format === "json" ? Logger.jsonLogger : Logger.stringLogger
    const logger = Logger.make((options) => lines.write(formatted.log(options)))
    return Layer.merge(Logger.minimumLogLevel(level), Logger.replace(Logger.defaultLogger, logger))
  })
)
