import { Schema } from "effect"

/**
 * Money is counted in whole credits (1 credit = $0.001) held as `bigint` inside the
 * service and written on the wire as a string of digits. USD is always derived here.
 */
export const CREDITS_PER_USD = 1000n

/** A credit count on the wire: a string of whole digits, decoded to bigint. */
export const CreditsString = Schema.BigInt.annotations({
  identifier: "Credits",
  description: "Whole credits as a string of digits (1 credit = $0.001)",
  examples: [5000n]
})

/** USD string with three decimals for a credit amount, e.g. 12345n -> "12.345", -5n -> "-0.005". */
export const creditsToUsd = (credits: bigint): string => {
  const negative = credits < 0n
  const abs = negative ? -credits : credits
  const whole = abs / CREDITS_PER_USD
  const fraction = (abs % CREDITS_PER_USD).toString().padStart(3, "0")
  return `${negative ? "-" : ""}${whole}.${fraction}`
}

/**
 * Dollars as people read them (mails to owners), the way the dashboard writes them: two
 * decimals unless there is a fraction of a cent, with separators. Exact, never rounded:
 * 4990n -> "$4.99", 4995n -> "$4.995", 1234500n -> "$1,234.50", -5n -> "-$0.005".
 */
export const creditsToDollars = (credits: bigint): string => {
  const negative = credits < 0n
  const abs = negative ? -credits : credits
  const thousandths = (abs % CREDITS_PER_USD).toString().padStart(3, "0")
  const fraction = thousandths.endsWith("0") ? thousandths.slice(0, 2) : thousandths
  return `${negative ? "-" : ""}$${(abs / CREDITS_PER_USD).toLocaleString("en-US")}.${fraction}`
}

/** Whole credits as people read them (mails to owners), with separators: 22500n -> "22,500". */
export const creditsText = (credits: bigint): string => credits.toLocaleString("en-US")

/** Credits for a whole or decimal USD amount with at most three decimals, e.g. "5" -> 5000n. */
export const usdToCredits = (usd: number): bigint => BigInt(Math.round(usd * 1000))

/** The spec's amount object: `{credits: <string>, usd: <string>}`. */
export const Amount = Schema.Struct({
  credits: Schema.String.annotations({ description: "Whole credits as a string of digits" }),
  usd: Schema.String.annotations({ description: "USD with three decimals" })
}).annotations({ identifier: "Amount" })
export type Amount = typeof Amount.Type

export const amountOf = (credits: bigint): Amount => ({
  credits: credits.toString(),
  usd: creditsToUsd(credits)
})

/** Credits of a record written as the wire's amount object, read back from its credits. */
export const AmountFromCredits = Schema.transform(
  Amount,
  // Untitled, so the document shows only the amount object.
  Schema.BigIntFromSelf.annotations({ title: undefined, description: undefined }),
  {
    strict: true,
    decode: (amount) => BigInt(amount.credits),
    encode: amountOf
  }
)
