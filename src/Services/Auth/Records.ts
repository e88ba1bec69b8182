/** Small helpers shared by the identity services. */

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i

/** Whether a path value can be an identifier at all (anything else is simply not found). */
export const isUuid = (value: string): boolean => UUID.test(value)

/** A timestamp column as the wire's ISO 8601 UTC with milliseconds. */
export const iso = (value: Date | string): string => new Date(value).toISOString()

export const isoOrNull = (value: Date | string | null): string | null => (value === null ? null : iso(value))

/** Keeps stored user agents to a sane length. */
export const clip = (value: string | undefined, max = 512): string | null =>
  value === undefined || value.length === 0 ? null : value.slice(0, max)

export const MINUTE_MS = 60_000
export const HOUR_MS = 60 * MINUTE_MS
export const DAY_MS = 24 * HOUR_MS
