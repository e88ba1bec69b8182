/**
 * Instants in mails to owners, written for people and always in UTC (a mail does not know
 * the reader's zone): "29 Nov 2026, 14:05 UTC", "29 Nov 2026".
 */
const dateTime = new Intl.DateTimeFormat("en-GB", {
  day: "numeric",
  month: "short",
  year: "numeric",
  hour: "2-digit",
  minute: "2-digit",
  hourCycle: "h23",
  timeZone: "UTC"
})
const dateOnly = new Intl.DateTimeFormat("en-GB", { day: "numeric", month: "short", year: "numeric", timeZone: "UTC" })

export const utcDateTime = (at: Date): string => `${dateTime.format(at)} UTC`

/** A day ("2026-11-29", or the day of an ISO timestamp) as "29 Nov 2026". */
export const utcDate = (day: string): string => dateOnly.format(new Date(`${day.slice(0, 10)}T00:00:00Z`))
