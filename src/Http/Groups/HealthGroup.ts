import { HttpApiEndpoint, HttpApiGroup, OpenApi } from "@effect/platform"
import { Schema } from "effect"
import { ServiceUnavailable } from "../../Errors/ApiErrors.js"
import { wire } from "../../Errors/Wire.js"

/**
 * Probes for an orchestrator: `/healthz` answers while the process serves at all;
 * `/readyz` answers 200 only while this replica takes new requests (its database reachable
 * with every migration applied, not shutting down). Neither waits in the request queue nor counts toward rate limits.
 */
export const Health = Schema.Struct({ status: Schema.Literal("ok") }).annotations({ identifier: "Health" })

export const Readiness = Schema.Struct({
  status: Schema.Literal("ok"),
  requests: Schema.Struct({
    running: Schema.Int.annotations({ description: "Requests running now (at most MAX_CONCURRENT_REQUESTS)" }),
    queued: Schema.Int.annotations({ description: "Requests waiting for a place (at most MAX_QUEUED_REQUESTS)" })
  })
}).annotations({ identifier: "Readiness" })

export class HealthGroup extends HttpApiGroup.make("health")
  .add(
    HttpApiEndpoint.get("live", "/healthz")
      .annotateContext(
        OpenApi.annotations({ summary: "Liveness probe", description: "Answers while the process serves at all." })
      ).addSuccess(Health)
  )
  .add(
    HttpApiEndpoint.get("ready", "/readyz")
      .annotateContext(
        OpenApi.annotations({
          summary: "Readiness probe",
          description:
            "Answers 200 only while this replica takes new requests: database reachable, migrations applied, not draining."
        })
      ).addSuccess(Readiness).addError(wire(ServiceUnavailable))
  )
  .annotateContext(OpenApi.annotations({ title: "Health", description: "Liveness and readiness probes." }))
{}
