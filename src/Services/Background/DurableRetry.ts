import { Duration, Effect, Option, type Schedule, ScheduleDecision, ScheduleIntervals } from "effect"

/**
 * Durable retries: the wait between tries is defined by an Effect `Schedule`, but the work
 * is a database row, so the next try's time is stored rather than slept on. `delayAfterTries`
 * steps the schedule `tries` times (without sleeping) and answers the wait before the next
 * try, or none when the schedule is exhausted.
 */
export const delayAfterTries = <Out>(
  schedule: Schedule.Schedule<Out, unknown>,
  tries: number,
  now: number
): Effect.Effect<Option.Option<Duration.Duration>> =>
  Effect.gen(function*() {
    let state = schedule.initial
    let at = now
    let delay: Option.Option<Duration.Duration> = Option.none()
    for (let i = 0; i < tries; i++) {
      const [next, , decision] = yield* schedule.step(at, undefined, state)
      if (ScheduleDecision.isDone(decision)) return Option.none()
      const start = Math.max(at, ScheduleIntervals.start(decision.intervals))
      delay = Option.some(Duration.millis(start - at))
      at = start
      state = next
    }
    return delay
  })

/** A lease long enough to cover one bounded attempt; a crashed worker's rows come back after it. */
export const LEASE = Duration.seconds(60)
