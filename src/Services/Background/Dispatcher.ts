import { Cause, type Duration, Effect, FiberSet, Queue, Ref, type Scope } from "effect"
import { roundEnded } from "./WorkerRounds.js"

/**
 * The loop every durable-row worker runs: claim due rows (the claim uses
 * `FOR UPDATE SKIP LOCKED` and a lease, so replicas never take the same row at once), work
 * on up to `concurrency` of them at a time, and when nothing is due wait for the poll
 * interval. Fibers live in the caller's scope and stop with it (SIGTERM, test teardown); a
 * row interrupted mid-work comes back when its lease ends.
 *
 * Claims come in batches: after a claim, the loop waits until a quarter of the slots have
 * finished (or all of them, or the poll interval passed) before it claims again, so one
 * query takes many rows. Rows may carry a key (a webhook endpoint); the claim is told how
 * many of each key are in flight so it can keep every key within `perKeyLimit`.
 */
export interface DispatcherOptions<Row> {
  readonly name: string
  readonly concurrency: number
  readonly pollInterval: Duration.DurationInput
  /** Takes up to `limit` due rows; `busy` lists the keys in flight and how many of each. */
  readonly claim: (limit: number, busy: ReadonlyArray<readonly [string, number]>) => Effect.Effect<ReadonlyArray<Row>>
  readonly process: (row: Row) => Effect.Effect<void>
  readonly keyOf?: ((row: Row) => string) | undefined
}

export const runDispatcher = <Row>(options: DispatcherOptions<Row>): Effect.Effect<void, never, Scope.Scope> =>
  Effect.gen(function*() {
    const running = yield* FiberSet.make()
    const inFlight = yield* Ref.make(0)
    const doneSinceClaim = yield* Ref.make(0)
    const perKey = new Map<string, number>()
    const batch = Math.max(1, Math.floor(options.concurrency / 4))
    const wake = yield* Queue.dropping<void>(1)

    const finished = (key: string | undefined) =>
      Effect.gen(function*() {
        if (key !== undefined) {
          const left = (perKey.get(key) ?? 1) - 1
          if (left <= 0) perKey.delete(key)
          else perKey.set(key, left)
        }
        const busy = yield* Ref.updateAndGet(inFlight, (n) => n - 1)
        const done = yield* Ref.updateAndGet(doneSinceClaim, (n) => n + 1)
        if (done >= batch || busy === 0) yield* Queue.offer(wake, undefined)
      })

    const waitForWork = Queue.take(wake).pipe(Effect.timeout(options.pollInterval), Effect.ignore)

    const round = Effect.gen(function*() {
      const free = options.concurrency - (yield* Ref.get(inFlight))
      if (free <= 0) return yield* waitForWork
      yield* Ref.set(doneSinceClaim, 0)
      const rows = yield* options.claim(free, [...perKey])
      // Nothing was in flight and nothing is due: all the work this round saw is done.
      if (rows.length === 0 && free === options.concurrency) yield* roundEnded(options.name)
      for (const row of rows) {
        const key = options.keyOf?.(row)
        if (key !== undefined) perKey.set(key, (perKey.get(key) ?? 0) + 1)
        yield* Ref.update(inFlight, (n) => n + 1)
        yield* FiberSet.run(
          running,
          options.process(row).pipe(
            Effect.catchAllCause((cause) =>
              Cause.isInterruptedOnly(cause)
                ? Effect.void
                : Effect.logError(`${options.name}: an item failed unexpectedly`, cause)
            ),
            Effect.ensuring(finished(key))
          )
        )
      }
      // A full claim may leave more due rows: claim again as soon as slots free up.
      if (rows.length < free || rows.length === 0) yield* waitForWork
    })

    yield* round.pipe(
      Effect.catchAllCause((cause) =>
        Effect.logError(`${options.name}: claiming work failed; trying again`, cause).pipe(
          Effect.zipRight(Effect.sleep(options.pollInterval))
        )
      ),
      Effect.forever,
      Effect.forkScoped
    )
  })
