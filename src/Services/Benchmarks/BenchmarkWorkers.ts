import { Duration, Effect, Layer, Schedule } from "effect"
import { randomUUID } from "node:crypto"
import { BenchmarkRuns } from "./BenchmarkRuns.js"

/**
 * The server's benchmark worker (one run at a time per replica, polling as the job workers
 * do) and the hourly schedule that queues a run for every tool whose report is due.
 */
export const BenchmarkWorkersLive = Layer.scopedDiscard(Effect.gen(function*() {
  const runs = yield* BenchmarkRuns
  const owner = `benchmarks:${randomUUID()}`
  yield* Effect.gen(function*() {
    if (!(yield* runs.runNext(owner))) yield* Effect.sleep(Duration.millis(runs.pollMs))
  }).pipe(
    Effect.catchAllCause((cause) =>
      Effect.zipRight(Effect.logError("Benchmark worker failed; retrying", cause), Effect.sleep(Duration.seconds(1)))
    ),
    Effect.forever,
    Effect.forkScoped
  )
  yield* runs.scheduleDue.pipe(
    Effect.catchAllCause((cause) => Effect.logWarning("Benchmark schedule failed", cause)),
    Effect.repeat(Schedule.spaced(Duration.hours(1))),
    Effect.forkScoped
  )
}))
