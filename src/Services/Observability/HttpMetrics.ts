import { Effect, Metric, MetricBoundaries } from "effect"

/**
 * Request metrics, kept in the Effect metric registry: `/metrics` prints them for
 * Prometheus and, when OTLP is configured, they are exported with the traces.
 * Labels are the route template (`/v1/orgs/:orgId/agents`), never a raw path, so their
 * number stays bounded.
 */
const requests = Metric.counter("http_requests_total", {
  description: "Requests answered, by method, route template and status"
})

const duration = Metric.histogram(
  "http_request_duration_seconds",
  MetricBoundaries.fromIterable([0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60]),
  "Time from the request's arrival to its answer, by method and route template"
)

export const recordRequest = (method: string, route: string, status: number, seconds: number) =>
  Effect.zipRight(
    Metric.increment(
      Metric.tagged(Metric.tagged(Metric.tagged(requests, "method", method), "route", route), "status", String(status))
    ),
    Metric.update(Metric.tagged(Metric.tagged(duration, "method", method), "route", route), seconds)
  )
