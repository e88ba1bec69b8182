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
    /** The clock itself, for a test's effect (`inShiftedTime` in testLayers.ts). */
    clock,
    /** Moves the service's time forward. */
    advance: (duration: Duration.DurationInput) => {
      offsetMs += Duration.toMillis(duration)
    },
    now: () => real.unsafeCurrentTimeMillis() + offsetMs,
    /**
     * Moves the service's time to one second past the start of the next window of
     * `windowSeconds` (windows aligned to the epoch, as the rate limiter's are), so what
     * follows has the whole window before it; answers that start.
     */
    toNextWindow: (windowSeconds: number) => {
      const windowMs = windowSeconds * 1000
      const now = real.unsafeCurrentTimeMillis() + offsetMs
      const start = (Math.floor(now / windowMs) + 1) * windowMs
      offsetMs += start + 1000 - now
      return start
    }
  }
}

export type ShiftableClock = ReturnType<typeof makeShiftableClock>
