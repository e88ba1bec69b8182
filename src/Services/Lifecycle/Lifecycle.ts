import { Cause, Config, Deferred, Duration, Effect, Exit, Fiber, Option, Schedule } from "effect"
import { ServiceUnavailable } from "../../Errors/ApiErrors.js"

/**
 * Admission and draining of requests on this replica.
 *
 * Overload: at most MAX_CONCURRENT_REQUESTS run at once; up to MAX_QUEUED_REQUESTS more
 * wait, each for at most REQUEST_QUEUE_TIMEOUT_MS. Past either bound a request answers at
 * once 503 `service_unavailable` with `Retry-After`, rather than late. The queue is also
 * kept to what can be served within the queue timeout at the pace requests finish now:
 * a request that would only wait to time out is refused at once instead (on arrival, or
 * from the back of the queue when the pace drops). Waiting happens before a request does
 * anything, so a gateway call never holds credits while queued.
 *
 * Shutdown: once draining, new requests answer 503; `drain` waits for those admitted to
 * finish, up to the grace, then stops the rest (they answer 503; a gateway call's own
 * fiber, stopped with the gateway, releases its hold).
 */
export interface Admission {
  readonly running: number
  readonly queued: number
  readonly draining: boolean
}

export class Lifecycle extends Effect.Service<Lifecycle>()("Lifecycle/Lifecycle", {
  effect: Effect.gen(function*() {
    const maxRunning = yield* Config.integer("MAX_CONCURRENT_REQUESTS").pipe(Config.withDefault(256))
    const maxQueued = yield* Config.integer("MAX_QUEUED_REQUESTS").pipe(Config.withDefault(1024))
    const queueTimeout = Duration.millis(
      yield* Config.integer("REQUEST_QUEUE_TIMEOUT_MS").pipe(Config.withDefault(5000))
    )

    const clock = yield* Effect.clock
    const queueSeconds = Duration.toMillis(queueTimeout) / 1000

    // Plain state changed only inside synchronous steps, so each change is atomic.
    let running = 0
    let draining = false
    /** Waiting requests, oldest first; each is told `true` (a place) or `false` (refused). */
    const waiting: Array<Deferred.Deferred<boolean>> = []
    /** The fibers of admitted requests, interrupted when the grace is over. */
    const admitted = new Set<Fiber.RuntimeFiber<unknown, unknown>>()
    let stopping = false

    // The pace: when the requests of the last two seconds finished (at most 512 kept).
    const finishedAt: Array<number> = []
    const forgetOld = (now: number) => {
      while (finishedAt.length > 512 || (finishedAt.length > 0 && finishedAt[0]! < now - 2000)) finishedAt.shift()
    }
    /**
     * How many waiting requests can get a place within the queue timeout at the pace
     * requests finish now; MAX_QUEUED_REQUESTS while there is no pace to judge by (fewer
     * than two finished lately: a quiet replica, or long calls).
     */
    const servable = () => {
      const now = clock.unsafeCurrentTimeMillis()
      forgetOld(now)
      if (finishedAt.length < 2) return maxQueued
      const perSecond = finishedAt.length / Math.max(0.05, (now - finishedAt[0]!) / 1000)
      return Math.min(maxQueued, Math.floor(perSecond * queueSeconds))
    }

    /** Hands a freed place to the longest waiter, or gives it back; refuses the waiters the pace cannot serve in time. */
    const handOver = () => {
      const next = waiting.shift()
      if (next === undefined) running--
      else Deferred.unsafeDone(next, Exit.succeed(true))
      const keep = servable()
      while (waiting.length > keep) Deferred.unsafeDone(waiting.pop()!, Exit.succeed(false))
    }
    /** A request finished: its place goes on, and the pace counts it. */
    const release = Effect.sync(() => {
      finishedAt.push(clock.unsafeCurrentTimeMillis())
      handOver()
    })
    /** A place handed to a waiter that had already given up goes on. */
    const handBack = Effect.sync(handOver)

    const unavailable = (message: string) => new ServiceUnavailable({ message })

    /** Takes a place: at once when one is free, else in the queue until one is handed over. */
    const takePlace = Effect.suspend(() => {
      if (draining) return Effect.fail(unavailable("The service is shutting down; retry on another replica"))
      if (running < maxRunning) {
        running++
        return Effect.void
      }
      if (waiting.length >= servable()) {
        return Effect.fail(unavailable("The service is over capacity; retry shortly"))
      }
      const place = Deferred.unsafeMake<boolean>(undefined as never)
      waiting.push(place)
      return Deferred.await(place).pipe(
        Effect.timeoutOption(queueTimeout),
        Effect.onInterrupt(() => giveUp(place)),
        Effect.flatMap(Option.match({
          onSome: (placed) =>
            placed ? Effect.void : Effect.fail(unavailable("The service is over capacity; retry shortly")),
          onNone: () =>
            Effect.zipRight(giveUp(place), Effect.fail(unavailable("The service is over capacity; retry shortly")))
        }))
      )
    })

    /** A waiter that stops waiting: out of the queue, or, if a place reached it meanwhile, passes it on. */
    const giveUp = (place: Deferred.Deferred<boolean>) =>
      Effect.suspend(() => {
        const index = waiting.indexOf(place)
        if (index >= 0) {
          waiting.splice(index, 1)
          return Effect.void
        }
        // Refused meanwhile: it holds no place.
        return Effect.flatMap(Deferred.await(place), (placed) => (placed ? handBack : Effect.void))
      })

    /**
     * Runs `effect` as an admitted request, in the request's own fiber. The platform runs a
     * request uninterruptibly (its router makes handlers interruptible), so waiting for a
     * place and running are made interruptible here explicitly: a queue timeout or the end
     * of the grace must be able to stop them. Between the two, nothing can stop the place
     * from being given back. A request stopped at the end of the grace fails with 503; it
     * is interrupted rather than raced against the stop, which would fork two fibers per
     * request.
     */
    const admit = <A, E, R>(effect: Effect.Effect<A, E, R>): Effect.Effect<A, E | ServiceUnavailable, R> =>
      Effect.uninterruptible(
        Effect.zipRight(
          Effect.interruptible(takePlace),
          Effect.withFiberRuntime<A, E | ServiceUnavailable, R>((fiber) => {
            const request = fiber as Fiber.RuntimeFiber<unknown, unknown>
            admitted.add(request)
            return Effect.interruptible(effect).pipe(
              Effect.catchAllCause((cause): Effect.Effect<never, E | ServiceUnavailable> =>
                stopping && Cause.isInterruptedOnly(cause)
                  ? Effect.failSync(() =>
                    unavailable("The service shut down before this request finished; it was stopped")
                  )
                  : Effect.failCause(cause)
              ),
              Effect.ensuring(Effect.zipRight(Effect.sync(() => admitted.delete(request)), release))
            )
          })
        )
      )

    /** The grace is over: every admitted request still running is stopped. */
    const stopAdmitted = Effect.suspend(() => {
      stopping = true
      return Effect.forEach([...admitted], (fiber) => Fiber.interruptAsFork(fiber, fiber.id()), { discard: true })
    })

    const state = Effect.sync((): Admission => ({ running, queued: waiting.length, draining }))

    /** New requests answer 503 from now on. */
    const markDraining = Effect.sync(() => {
      draining = true
    })

    const idle = Effect.sync(() => running === 0 && waiting.length === 0)
    // Interruptible on purpose: drain runs in a finalizer, where everything is
    // uninterruptible, and the grace's timeout must be able to stop the waiting.
    const untilIdle = Effect.interruptible(
      Effect.repeat(idle, { until: (done) => done, schedule: Schedule.spaced("20 millis") })
    )

    /** Waits for admitted requests to finish, up to `grace`; then stops what remains and waits for it to end. */
    const drain = (grace: Duration.DurationInput) =>
      Effect.gen(function*() {
        const finished = yield* untilIdle.pipe(Effect.timeoutOption(grace))
        if (Option.isSome(finished)) return { stopped: false }
        yield* stopAdmitted
        yield* untilIdle.pipe(Effect.timeoutOption("5 seconds"))
        return { stopped: true }
      })

    return { admit, state, markDraining, drain } as const
  })
}) {}
