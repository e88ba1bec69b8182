import { Duration, Effect, Schedule } from "effect"
import type { ServiceError } from "./errors.js"

/**
 * The retry rules of the official clients (the specification's, exactly): up to `maxRetries`
 * retries (3 by default, 0 allowed), only of errors marked retryable (the service's flag, or
 * the client-side `network_error` and `timeout`); wait out `Retry-After` when it is at most
 * 60 seconds, otherwise back off exponentially from 0.5 s up to 8 s with jitter (between half
 * and all of the step).
 */
export const BASE_DELAY_MS = 500
export const MAX_DELAY_MS = 8_000
export const MAX_RETRY_AFTER_SECONDS = 60

export interface RetryPolicy {
  readonly maxRetries: number
  /** A number in [0, 1) for the jitter; injectable so tests are exact. */
  readonly random: () => number
}

export const retryPolicy = (options: Partial<RetryPolicy> = {}): RetryPolicy => {
  const maxRetries = options.maxRetries ?? 3
  if (!Number.isInteger(maxRetries) || maxRetries < 0) throw new RangeError("maxRetries must be 0 or more")
  return { maxRetries, random: options.random ?? Math.random }
}

/** The wait before retry number `retriesDone + 1` when the service named none. */
export const backoffMs = (policy: RetryPolicy, retriesDone: number) => {
  const ceiling = Math.min(BASE_DELAY_MS * 2 ** retriesDone, MAX_DELAY_MS)
  return ceiling / 2 + policy.random() * (ceiling / 2)
}

export const delayMs = (policy: RetryPolicy, error: ServiceError, retriesDone: number) =>
  error.retryAfter !== null && error.retryAfter >= 0 && error.retryAfter <= MAX_RETRY_AFTER_SECONDS
    ? error.retryAfter * 1000
    : backoffMs(policy, retriesDone)

/**
 * The rules as a Schedule over the errors of one call's tries: it goes on while the error is
 * retryable and fewer than `maxRetries` retries were made, and waits `delayMs` before each
 * retry (the Effect clock's sleep, or `sleep` when one is given: tests record the waits).
 * The same request is tried again, so an execute's idempotency key stays the same.
 */
export const retrySchedule = (
  policy: RetryPolicy,
  sleep?: (ms: number) => Promise<void>
): Schedule.Schedule<number, ServiceError> => {
  const waits = Schedule.recurWhile((error: ServiceError) => error.retryable).pipe(
    Schedule.zipWith(Schedule.recurs(policy.maxRetries), (error, retriesDone) => delayMs(policy, error, retriesDone))
  )
  return sleep === undefined
    ? Schedule.addDelay(waits, (ms) => Duration.millis(ms))
    : Schedule.modifyDelayEffect(waits, (ms) => Effect.as(Effect.promise(() => sleep(ms)), Duration.zero))
}
