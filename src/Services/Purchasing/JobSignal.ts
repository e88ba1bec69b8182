import { Effect, Queue } from "effect"

/** Wakes the job workers of this replica when it accepts a job. */
export class JobSignal extends Effect.Service<JobSignal>()("Purchasing/JobSignal", {
  effect: Effect.map(Queue.sliding<void>(1), (queue) => ({
    notify: Queue.offer(queue, undefined).pipe(Effect.asVoid),
    wait: Queue.take(queue)
  }))
}) {}
