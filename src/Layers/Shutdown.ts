import { Config, Duration, Effect, Layer } from "effect"
import type { Server } from "node:http"
import { Lifecycle } from "../Services/Lifecycle/Lifecycle.js"

/**
 * Clean shutdown. Built last, so on SIGTERM or SIGINT its finalizer runs first, while the
 * pool, the services and the workers are all still there: it marks the replica draining
 * (`/readyz` answers 503, new requests 503 with `Connection: close`), stops accepting
 * connections, and lets admitted requests finish for up to SHUTDOWN_GRACE_MS (a gateway
 * call waits for its provider). Past the grace the rest answer 503 and stop. Then the
 * other finalizers run in reverse order of construction: the gateway's in-flight calls
 * settle or release their holds, the workers stop, and the pool closes last.
 */
export const ShutdownLive = (server: Server) =>
  Layer.scopedDiscard(
    Effect.gen(function*() {
      const lifecycle = yield* Lifecycle
      const grace = Duration.millis(yield* Config.integer("SHUTDOWN_GRACE_MS").pipe(Config.withDefault(30_000)))
      yield* Effect.addFinalizer(() =>
        Effect.gen(function*() {
          yield* lifecycle.markDraining
          const before = yield* lifecycle.state
          yield* Effect.logInfo(
            `Shutting down: no new connections; waiting up to ${
              Duration.format(grace)
            } for ${before.running} request(s) in flight`
          )
          server.close()
          server.closeIdleConnections()
          const { stopped } = yield* lifecycle.drain(grace)
          server.closeAllConnections()
          yield* Effect.logInfo(
            stopped
              ? "Grace period over: requests still running were stopped; releasing what they held"
              : "Requests in flight finished; stopping workers and closing the pool"
          )
        })
      )
    })
  )
