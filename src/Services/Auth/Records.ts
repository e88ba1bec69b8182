/** Small helpers shared by the identity services. */

/** Keeps stored user agents to a sane length. */
export const clip = (value: string | undefined, max = 512): string | null =>
  value === undefined || value.length === 0 ? null : value.slice(0, max)

export const MINUTE_MS = 60_000
export const HOUR_MS = 60 * MINUTE_MS
export const DAY_MS = 24 * HOUR_MS
