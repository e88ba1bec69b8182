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

export const shouldRetry = (policy: RetryPolicy, error: ServiceError, retriesDone: number) =>
  retriesDone < policy.maxRetries && error.retryable

/** The wait before retry number `retriesDone + 1` when the service named none. */
export const backoffMs = (policy: RetryPolicy, retriesDone: number) => {
  const ceiling = Math.min(BASE_DELAY_MS * 2 ** retriesDone, MAX_DELAY_MS)
  return ceiling / 2 + policy.random() * (ceiling / 2)
}

export const delayMs = (policy: RetryPolicy, error: ServiceError, retriesDone: number) =>
  error.retryAfter !== null && error.retryAfter >= 0 && error.retryAfter <= MAX_RETRY_AFTER_SECONDS
    ? error.retryAfter * 1000
    : backoffMs(policy, retriesDone)
