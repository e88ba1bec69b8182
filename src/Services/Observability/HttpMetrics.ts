import { Effect, Metric, MetricBoundaries, MetricLabel } from "effect"

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

/**
 * The tagged metrics of each method, route and status, made once: labels are route
 * templates and a bounded set of statuses, so these maps stay small, and a request does
 * not rebuild and rehash its labels.
 */
const countersByLabel = new Map<string, typeof requests>()
const histogramsByLabel = new Map<string, typeof duration>()

const counterFor = (method: string, route: string, status: number) => {
  const label = `${method} ${route} ${status}`
  let counter = countersByLabel.get(label)
  if (counter === undefined) {
    counter = Metric.taggedWithLabels(requests, [
      MetricLabel.make("method", method),
      MetricLabel.make("route", route),
      MetricLabel.make("status", String(status))
    ])
    countersByLabel.set(label, counter)
  }
  return counter
}

const histogramFor = (method: string, route: string) => {
  const label = `${method} ${route}`
  let histogram = histogramsByLabel.get(label)
  if (histogram === undefined) {
    histogram = Metric.taggedWithLabels(duration, [
      MetricLabel.make("method", method),
      MetricLabel.make("route", route)
    ])
    histogramsByLabel.set(label, histogram)
  }
  return histogram
}

export const recordRequest = (method: string, route: string, status: number, seconds: number) =>
  Effect.zipRight(
    Metric.increment(counterFor(method, route, status)),
    Metric.update(histogramFor(method, route), seconds)
  )
