/** A timestamp column as the wire's ISO 8601 UTC with milliseconds. */
export const iso = (value: Date | string): string => new Date(value).toISOString()

export const isoOrNull = (value: Date | string | null): string | null => (value === null ? null : iso(value))
