/**
 * How the dashboard writes money and time, one way everywhere: dollars with two decimals
 * unless the amount has a fraction of a cent (a credit is a tenth of a cent), whole credits
 * with separators, and dates in the viewer's time zone with the UTC instant on hover.
 */

/** "5.000" (the API's USD string, 3 decimals) as "$5.00"; "$4.995" and "$0.005" keep their third decimal. */
export const dollars = (usd: string): string => {
  const negative = usd.startsWith("-")
  const [whole = "0", fraction = ""] = (negative ? usd.slice(1) : usd).split(".")
  const digits = fraction.padEnd(3, "0")
  const cents = digits.endsWith("0") ? digits.slice(0, 2) : digits
  return `${negative ? "-" : ""}$${Number(whole).toLocaleString("en-US")}.${cents}`
}

/**
 * A payment's amount in the currency it was paid in, written like the rest of the page:
 * "$25.00", "₹2,100.00" (the symbol, not "25.00 USD").
 */
export const paidAmount = (amountMinor: bigint, currency: string): string => {
  const negative = amountMinor < 0n
  const abs = negative ? -amountMinor : amountMinor
  const symbol = currency.toLowerCase() === "usd"
    ? "$"
    : currency.toLowerCase() === "inr"
    ? "₹"
    : `${currency.toUpperCase()} `
  return `${negative ? "-" : ""}${symbol}${(abs / 100n).toLocaleString("en-US")}.${
    (abs % 100n).toString().padStart(2, "0")
  }`
}

/** Whole credits with separators: "50,000". */
export const credits = (amount: string | number | bigint): string => BigInt(amount).toLocaleString("en-US")

/** Credits in dollars (1 credit = $0.001), for numbers the page holds rather than amount objects. */
export const creditsInDollars = (amount: string | number | bigint): string => {
  const value = BigInt(amount)
  const sign = value < 0n ? "-" : ""
  const abs = value < 0n ? -value : value
  return dollars(`${sign}${abs / 1000n}.${(abs % 1000n).toString().padStart(3, "0")}`)
}

const dateTime = new Intl.DateTimeFormat(undefined, { dateStyle: "medium", timeStyle: "short" })
const dateOnly = new Intl.DateTimeFormat(undefined, { dateStyle: "medium" })

/** The instant as the viewer reads it (their zone), e.g. "Nov 27, 2026, 2:05 PM". */
export const localDateTime = (iso: string): string => dateTime.format(new Date(iso))
export const localDate = (iso: string): string => dateOnly.format(new Date(iso))

/** The same instant in UTC, for the hover: "2026-11-27 13:05:09 UTC". */
export const utcText = (iso: string): string => `${new Date(iso).toISOString().slice(0, 19).replace("T", " ")} UTC`

/** A UTC day of the API ("2026-11-27") written like the other dates, without moving it to another day. */
export const utcDay = (day: string): string =>
  new Intl.DateTimeFormat(undefined, { dateStyle: "medium", timeZone: "UTC" }).format(new Date(`${day}T00:00:00Z`))

/** A message of the service as an owner reads it: without the API paths it names for callers. */
export const ownerText = (message: string): string =>
  message.replace(/\s*\((?:GET|POST|PUT|PATCH|DELETE) \/[^)]*\)/g, "").replace(
    /:?\s*(?:GET|POST|PUT|PATCH|DELETE) \/\S+/g,
    ""
  )
