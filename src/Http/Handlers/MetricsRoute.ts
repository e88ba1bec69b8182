import { HttpApiBuilder, HttpServerRequest, HttpServerResponse } from "@effect/platform"
import { Effect, Metric, Option, Redacted } from "effect"
import { timingSafeEqual } from "node:crypto"
import { Lifecycle } from "../../Services/Lifecycle/Lifecycle.js"
import { Backlogs } from "../../Services/Observability/Backlogs.js"
import { ObservabilityConfig } from "../../Services/Observability/ObservabilityConfig.js"
import { prometheusText, type ScrapeGauge } from "../../Services/Observability/Prometheus.js"
import { PublicUrl } from "../../Services/PublicUrl.js"
import { RateLimiter } from "../../Services/RateLimiter/RateLimiter.js"
import type { RateLimitStoreState } from "../../Services/RateLimiter/RateLimitStore.js"
import { errorResponse } from "../Middleware/ErrorResponses.js"
import { bearerTokenOf } from "../PresentedCredential.js"

const storeStates: ReadonlyArray<RateLimitStoreState> = ["memory", "redis", "memory_fallback"]

const sameSecret = (given: string, expected: string) => {
  const a = Buffer.from(given)
  const b = Buffer.from(expected)
  return a.length === b.length && timingSafeEqual(a, b)
}

/**
 * `GET /metrics`: Prometheus text, with `Authorization: Bearer <METRICS_TOKEN>`. The
 * request metrics come from the registry; the rest is read at scrape time. What each
 * metric means is in the README's operator section.
 */
export const MetricsRouteLive = HttpApiBuilder.Router.use((router) =>
  Effect.gen(function*() {
    const config = yield* ObservabilityConfig
    const backlogs = yield* Backlogs
    const lifecycle = yield* Lifecycle
    const limiter = yield* RateLimiter
    const baseUrl = yield* PublicUrl

    const scrapeGauges = Effect.gen(function*() {
      const counts = yield* backlogs.counts
      const admission = yield* lifecycle.state
      const store = yield* limiter.storeState
      const gauges: Array<ScrapeGauge> = [
        { name: "requests_running", help: "Requests running now", value: admission.running },
        { name: "requests_queued", help: "Requests waiting for a place to run", value: admission.queued },
        { name: "draining", help: "1 while this replica shuts down", value: admission.draining ? 1 : 0 },
        {
          name: "ledger_holds_open",
          help: "Credits held for calls and items not yet settled",
          value: counts.holds_open
        },
        {
          name: "webhook_deliveries_pending",
          help: "Webhook deliveries waiting for their first or next attempt",
          value: counts.webhook_deliveries_pending
        },
        { name: "mail_outbox_pending", help: "Mails waiting to be sent", value: counts.mails_pending },
        {
          name: "purchase_jobs",
          help: "Purchase jobs by state",
          value: counts.jobs_queued,
          labels: { state: "queued" }
        },
        {
          name: "purchase_jobs",
          help: "Purchase jobs by state",
          value: counts.jobs_running,
          labels: { state: "running" }
        },
        ...storeStates.map((state) => ({
          name: "rate_limit_store",
          help: "Where rate-limit counters are kept (1 on the current one)",
          value: state === store ? 1 : 0,
          labels: { store: state }
        }))
      ]
      return gauges
    })

    const handler = Effect.gen(function*() {
      if (Option.isNone(config.metricsToken)) {
        return errorResponse(baseUrl, "not_found", "Metrics are off: set METRICS_TOKEN to open /metrics")
      }
      const request = yield* HttpServerRequest.HttpServerRequest
      const given = bearerTokenOf(request) ?? ""
      if (!sameSecret(given, Redacted.value(config.metricsToken.value))) {
        return errorResponse(
          baseUrl,
          "unauthenticated",
          "Send the metrics token: Authorization: Bearer <METRICS_TOKEN>"
        )
      }
      const text = prometheusText(yield* Metric.snapshot, yield* scrapeGauges)
      return HttpServerResponse.text(text, { contentType: "text/plain; version=0.0.4; charset=utf-8" })
    })
    yield* router.get("/metrics", handler)
  })
)
