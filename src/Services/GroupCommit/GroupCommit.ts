import { Chunk, Deferred, Effect, Exit, Queue } from "effect"

/**
 * Group commit: what arrives while a batch is being written waits in a queue and goes in
 * the next batch, together, in one transaction (one round trip per statement and one
 * commit for all of them). A worker takes whatever is waiting, from one request up to
 * `maxBatch`, the moment it is free, so a lone request is sent at once and a busy server
 * sends bigger batches rather than more of them.
 *
 * `write` answers one result per request, in order. When a whole batch fails (a defect,
 * a lost connection), each of its requests is written again alone, so one bad request
 * cannot fail the others; what still fails fails only its own caller.
 *
 * A batch that has begun is finished before its worker stops (the workers end with the
 * scope), so a transaction is never cut off halfway by a shutdown.
 */
export interface GroupCommitOptions<I, O> {
  readonly maxBatch: number
  /** Batches written at the same time, each on its own connection. */
  readonly workers: number
  readonly write: (batch: ReadonlyArray<I>) => Effect.Effect<ReadonlyArray<O>>
}

export const makeGroupCommit = <I, O>(options: GroupCommitOptions<I, O>) =>
  Effect.gen(function*() {
    const queue = yield* Effect.acquireRelease(
      Queue.unbounded<readonly [I, Deferred.Deferred<O>]>(),
      (queue) => Queue.shutdown(queue)
    )

    const answer = (waiting: ReadonlyArray<readonly [I, Deferred.Deferred<O>]>, exit: Exit.Exit<ReadonlyArray<O>>) =>
      Effect.forEach(
        waiting,
        ([, deferred], i) => Deferred.done(deferred, Exit.map(exit, (answers) => answers[i]!)),
        { discard: true }
      )

    const writeBatch = (waiting: ReadonlyArray<readonly [I, Deferred.Deferred<O>]>) =>
      Effect.gen(function*() {
        const exit = yield* Effect.exit(options.write(waiting.map(([request]) => request)))
        if (Exit.isSuccess(exit) || waiting.length === 1) return yield* answer(waiting, exit)
        yield* Effect.logWarning("A batch failed; writing its requests one by one", exit.cause)
        yield* Effect.forEach(
          waiting,
          (one) => Effect.flatMap(Effect.exit(options.write([one[0]])), (alone) => answer([one], alone)),
          { discard: true }
        )
      })

    const worker = Queue.takeBetween(queue, 1, options.maxBatch).pipe(
      Effect.flatMap((taken) => Effect.uninterruptible(writeBatch(Chunk.toReadonlyArray(taken)))),
      Effect.forever
    )
    for (let i = 0; i < options.workers; i++) yield* Effect.forkScoped(worker)

    /** Writes `request` in the next batch and answers its result. */
    return (request: I): Effect.Effect<O> =>
      Effect.flatMap(
        Deferred.make<O>(),
        (deferred) => Effect.zipRight(Queue.offer(queue, [request, deferred]), Deferred.await(deferred))
      )
  })
