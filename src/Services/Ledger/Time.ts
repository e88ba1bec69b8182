/**
 * Calendar boundaries in UTC for the ledger's rules: monthly budgets, the trial's hourly
 * window and daily quotas. Pure functions of a millisecond instant taken from `Clock`.
 */
const pad = (n: number) => n.toString().padStart(2, "0")

/** `YYYY-MM-01` of the calendar month (UTC) containing `ms`. */
export const monthOf = (ms: number): string => {
  const d = new Date(ms)
  return `${d.getUTCFullYear()}-${pad(d.getUTCMonth() + 1)}-01`
}

/** `YYYY-MM-DD` of the day (UTC) containing `ms`. */
export const dayOf = (ms: number): string => new Date(ms).toISOString().slice(0, 10)

/** Start of the clock hour (UTC) containing `ms`. */
export const hourStartOf = (ms: number): Date => new Date(Math.floor(ms / 3_600_000) * 3_600_000)

/** Milliseconds until the next 00:00 UTC. */
export const msUntilNextDay = (ms: number): number => 86_400_000 - (ms % 86_400_000)

/** A `date` column as `YYYY-MM-DD` (drivers hand back strings or Dates). */
export const dateString = (value: string | Date): string =>
  typeof value === "string" ? value.slice(0, 10) : value.toISOString().slice(0, 10)
