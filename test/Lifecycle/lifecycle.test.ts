import { describe, expect, it } from "@effect/vitest"
import { ConfigProvider, Deferred, Effect, Exit, Fiber, Layer, TestClock } from "effect"
import { Lifecycle } from "../../src/Services/Lifecycle/Lifecycle.js"

/**
 * Admission and draining on their own, with the test clock where time is the subject: at
 * most N run, the queue is bounded, a queued request gives up after the queue timeout and
 * leaks no place, places go to waiters in order, draining refuses new requests, and the
 * end of the grace stops what still runs.
 */
const lifecycle = (settings: Record<string, string>) =>
  Lifecycle.Default.pipe(
    Layer.provide(Layer.setConfigProvider(ConfigProvider.fromMap(new Map(Object.entries(settings)))))
  )

const limits = lifecycle({ MAX_CONCURRENT_REQUESTS: "2", MAX_QUEUED_REQUESTS: "1", REQUEST_QUEUE_TIMEOUT_MS: "1000" })

/** Lets other fibers run until the admission state is as expected. */
const settled = (admission: Lifecycle, running: number, queued: number) =>
  Effect.repeat(Effect.zipRight(Effect.yieldNow(), admission.state), {
    until: (state) => state.running === running && state.queued === queued
  })

/** A request that runs until `gate` opens, and says when it started. */
const gated = (gate: Deferred.Deferred<void>, started: Array<string>, name: string) =>
  Effect.zipRight(Effect.sync(() => started.push(name)), Deferred.await(gate))

/** Two requests hold both places until `gate` opens, and a third waits in the queue. */
const fullWithOneWaiting = <A, E>(
  admission: Lifecycle,
  gate: Deferred.Deferred<void>,
  started: Array<string>,
  waiter: Effect.Effect<A, E>
) =>
  Effect.gen(function*() {
    const running = yield* Effect.fork(
      Effect.all([admission.admit(gated(gate, started, "a")), admission.admit(gated(gate, started, "b"))], {
        concurrency: 2
      })
    )
    yield* settled(admission, 2, 0)
    const waiting = yield* Effect.fork(waiter)
    yield* settled(admission, 2, 1)
    return { running, waiting }
  })

describe("admission", () => {
  it.effect("runs two, queues one, refuses the fourth at once", () =>
    Effect.gen(function*() {
      const admission = yield* Lifecycle
      const gate = yield* Deferred.make<void>()
      const started: Array<string> = []
      const a = yield* Effect.fork(admission.admit(gated(gate, started, "a")))
      const b = yield* Effect.fork(admission.admit(gated(gate, started, "b")))
      const c = yield* Effect.fork(admission.admit(gated(gate, started, "c")))
      yield* settled(admission, 2, 1)
      const refused = yield* Effect.exit(admission.admit(Effect.void))
      expect(refused).toEqual(Exit.fail(expect.objectContaining({ _tag: "service_unavailable" })))
      yield* Deferred.succeed(gate, undefined)
      yield* Fiber.join(Fiber.zip(Fiber.zip(a, b), c))
      expect(started).toEqual(["a", "b", "c"])
      expect(yield* admission.state).toEqual({ running: 0, queued: 0, draining: false })
    }).pipe(Effect.provide(limits)))

  it.effect("a queued request gives up after the queue timeout and leaks no place", () =>
    Effect.gen(function*() {
      const admission = yield* Lifecycle
      const gate = yield* Deferred.make<void>()
      const started: Array<string> = []
      const { running, waiting } = yield* fullWithOneWaiting(
        admission,
        gate,
        started,
        Effect.exit(admission.admit(gated(gate, started, "late")))
      )
      yield* TestClock.adjust("999 millis")
      expect((yield* admission.state).queued).toBe(1)
      yield* TestClock.adjust("1 millis")
      const exit = yield* Fiber.join(waiting)
      expect(Exit.isFailure(exit) && JSON.stringify(exit.cause)).toContain("over capacity")
      expect(yield* admission.state).toEqual({ running: 2, queued: 0, draining: false })
      yield* Deferred.succeed(gate, undefined)
      yield* Fiber.join(running)
      // Both places are free again: two more run at once.
      const gate2 = yield* Deferred.make<void>()
      const again = yield* Effect.fork(
        Effect.all([admission.admit(gated(gate2, started, "x")), admission.admit(gated(gate2, started, "y"))], {
          concurrency: 2
        })
      )
      yield* settled(admission, 2, 0)
      yield* Deferred.succeed(gate2, undefined)
      yield* Fiber.join(again)
      expect(started).toEqual(["a", "b", "x", "y"])
    }).pipe(Effect.provide(limits)))

  it.effect("an interrupted waiter leaves the queue", () =>
    Effect.gen(function*() {
      const admission = yield* Lifecycle
      const gate = yield* Deferred.make<void>()
      const started: Array<string> = []
      const { running, waiting } = yield* fullWithOneWaiting(
        admission,
        gate,
        started,
        admission.admit(gated(gate, started, "gone"))
      )
      yield* Fiber.interrupt(waiting)
      expect(yield* admission.state).toEqual({ running: 2, queued: 0, draining: false })
      yield* Deferred.succeed(gate, undefined)
      yield* Fiber.join(running)
      expect(started).toEqual(["a", "b"])
      expect((yield* admission.state).running).toBe(0)
    }).pipe(Effect.provide(limits)))
})

describe("draining", () => {
  it.effect("refuses new requests and waits for those admitted", () =>
    Effect.gen(function*() {
      const admission = yield* Lifecycle
      const gate = yield* Deferred.make<void>()
      const inFlight = yield* Effect.fork(admission.admit(Effect.as(Deferred.await(gate), "finished")))
      yield* settled(admission, 1, 0)
      yield* admission.markDraining
      const refused = yield* Effect.exit(admission.admit(Effect.void))
      expect(Exit.isFailure(refused) && JSON.stringify(refused.cause)).toContain("shutting down")
      const drained = yield* Effect.fork(admission.drain("30 seconds"))
      yield* TestClock.adjust("10 seconds")
      yield* Deferred.succeed(gate, undefined)
      expect(yield* Fiber.join(inFlight)).toBe("finished")
      yield* TestClock.adjust("20 millis")
      expect(yield* Fiber.join(drained)).toEqual({ stopped: false })
    }).pipe(Effect.provide(limits)))

  it.effect("past the grace, what still runs is stopped with service_unavailable", () =>
    Effect.gen(function*() {
      const admission = yield* Lifecycle
      // Run as the platform runs a request: uninterruptibly, the answer written inside.
      const answer = yield* Deferred.make<Exit.Exit<never, unknown>>()
      yield* Effect.fork(
        Effect.uninterruptible(
          Effect.flatMap(Effect.exit(admission.admit(Effect.never)), (exit) => Deferred.succeed(answer, exit))
        )
      )
      yield* settled(admission, 1, 0)
      yield* admission.markDraining
      const drained = yield* Effect.fork(admission.drain("30 seconds"))
      yield* TestClock.adjust("30 seconds")
      yield* TestClock.adjust("20 millis")
      expect(yield* Fiber.join(drained)).toEqual({ stopped: true })
      const exit = yield* Deferred.await(answer)
      expect(Exit.isFailure(exit) && JSON.stringify(exit.cause)).toContain("shut down before this request finished")
      expect((yield* admission.state).running).toBe(0)
    }).pipe(Effect.provide(limits)))
})
