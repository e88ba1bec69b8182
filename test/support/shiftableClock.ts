import { Clock, Duration, Effect, Layer } from "effect"

/**
 * A clock the test can move forward: the service reads the real time plus an offset that
 * the test shifts, while sleeps (timeouts, poll intervals) stay real. Given to the server
 * with `startServer(env, shiftable.layer)`.
 */
export const makeShiftableClock = () => {
  let offsetMs = 0
  const real = Clock.make()
  const clock: Clock.Clock = {
    [Clock.ClockTypeId]: Clock.ClockTypeId,
    unsafeCurrentTimeMillis: () => real.unsafeCurrentTimeMillis() + offsetMs,
    unsafeCurrentTimeNanos: () => real.unsafeCurrentTimeNanos() + BigInt(offsetMs) * 1_000_000n,
    currentTimeMillis: Effect.sync(() => real.unsafeCurrentTimeMillis() + offsetMs),
    currentTimeNanos: Effect.sync(() => real.unsafeCurrentTimeNanos() + BigInt(offsetMs) * 1_000_000n),
    sleep: (duration) => real.sleep(duration)
  }
  return {
    layer: Layer.setClock(clock),
    /** Moves the service's time forward. */
    advance: (duration: Duration.DurationInput) => {
      offsetMs += Duration.toMillis(duration)
    },
    now: () => real.unsafeCurrentTimeMillis() + offsetMs
  }
}

export type ShiftableClock = ReturnType<typeof makeShiftableClock>
