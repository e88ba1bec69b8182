import { describe, expect, it } from "@effect/vitest"
import { Deferred, Effect, Metric, Ref, Schedule } from "effect"
import { runDispatcher } from "../../src/Services/Background/Dispatcher.js"
import { workerRounds } from "../../src/Services/Background/WorkerRounds.js"

/**
 * A durable-row worker counts a round as ended only when it found nothing due with nothing
 * in flight: what tests wait on before saying nothing more happened.
 */
const rounds = (worker: string) =>
  Effect.map(Metric.value(Metric.tagged(workerRounds, "worker", worker)), (state) => Number(state.count))

const until = <A>(read: Effect.Effect<A>, done: (a: A) => boolean) =>
  read.pipe(
    Effect.repeat({ until: done, schedule: Schedule.spaced("5 millis") }),
    Effect.timeout("10 seconds")
  )

describe("worker rounds", () => {
  it.scopedLive("counts a round only once the rows it claimed are done and nothing more is due", () =>
    Effect.gen(function*() {
      const worker = `test worker ${Math.random()}`
      const release = yield* Deferred.make<void>()
      const claims = yield* Ref.make(0)
      const processed = yield* Ref.make(0)
      yield* runDispatcher({
        name: worker,
        concurrency: 4,
        pollInterval: "10 millis",
        claim: () => Effect.map(Ref.getAndUpdate(claims, (n) => n + 1), (n) => (n === 0 ? [1, 2] : [])),
        process: () => Effect.zipRight(Deferred.await(release), Ref.update(processed, (n) => n + 1))
      })
      // Claims go on while the two rows are held: none of those rounds is settled.
      yield* until(Ref.get(claims), (n) => n >= 5)
      expect(yield* rounds(worker)).toBe(0)
      yield* Deferred.succeed(release, undefined)
      yield* until(rounds(worker), (n) => n >= 1)
      expect(yield* Ref.get(processed)).toBe(2)
    }))
})
