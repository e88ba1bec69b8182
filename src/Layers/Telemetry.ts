import { Otlp } from "@effect/opentelemetry"
import { FetchHttpClient, HttpMiddleware } from "@effect/platform"
import { Config, Duration, Effect, Layer, Option } from "effect"
import { SERVICE_VERSION } from "../Domain/ServiceVersion.js"

/** `k1=v1,k2=v2` (the OTLP exporters' header format, values percent-encoded). */
const parseHeaders = (raw: string): Record<string, string> =>
  Object.fromEntries(
    raw.split(",").map((pair) => pair.trim()).filter((pair) => pair.includes("=")).map((pair) => {
      const at = pair.indexOf("=")
      return [pair.slice(0, at).trim(), decodeURIComponent(pair.slice(at + 1).trim())]
    })
  )

/**
 * OpenTelemetry over OTLP/HTTP (JSON), configured by the standard variables:
 * OTEL_EXPORTER_OTLP_ENDPOINT (the collector's base address; `/v1/traces`, `/v1/metrics`
 * and `/v1/logs` are appended), OTEL_EXPORTER_OTLP_HEADERS, OTEL_SERVICE_NAME,
 * OTEL_BSP_SCHEDULE_DELAY (ms between span exports, default 5000) and
 * OTEL_METRIC_EXPORT_INTERVAL (ms, default 60000).
 *
 * Unset, tracing is switched off altogether: spans (one per request, one per SQL
 * statement) become no-ops, and the server's tracing middleware is skipped (it would still
 * parse each request's URL and copy its headers for a span nobody keeps).
 */
export const TelemetryLive = Layer.unwrapEffect(
  Effect.gen(function*() {
    const endpoint = yield* Config.option(Config.string("OTEL_EXPORTER_OTLP_ENDPOINT"))
    if (Option.isNone(endpoint)) {
      return Layer.merge(
        Layer.setTracerEnabled(false),
        Layer.locallyScoped(HttpMiddleware.currentTracerDisabledWhen, () => true)
      )
    }
    const serviceName = yield* Config.string("OTEL_SERVICE_NAME").pipe(Config.withDefault("agent-purchasing-gateway"))
    const headers = yield* Config.string("OTEL_EXPORTER_OTLP_HEADERS").pipe(Config.withDefault(""))
    const spanDelayMs = yield* Config.integer("OTEL_BSP_SCHEDULE_DELAY").pipe(Config.withDefault(5000))
    const metricIntervalMs = yield* Config.integer("OTEL_METRIC_EXPORT_INTERVAL").pipe(Config.withDefault(60_000))
    return Otlp.layerJson({
      baseUrl: endpoint.value.replace(/\/+$/, ""),
      resource: { serviceName, serviceVersion: SERVICE_VERSION },
      headers: parseHeaders(headers),
      tracerExportInterval: Duration.millis(spanDelayMs),
      loggerExportInterval: Duration.millis(spanDelayMs),
      metricsExportInterval: Duration.millis(metricIntervalMs),
      shutdownTimeout: Duration.seconds(3)
    }).pipe(Layer.provide(FetchHttpClient.layer))
  })
)
