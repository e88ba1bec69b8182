import { ParseResult, Schema } from "effect"
import { CREDITS_PER_USD } from "./Money.js"
import { commonLimits } from "./Plans.js"

/**
 * Pure billing rules: what a top-up may be, the new-account cap and USD to INR
 * conversion. Card payments are charged in whole cents (or paise), so one cent buys 10
 * credits and a top-up is a whole number of cents.
 */
export const CREDITS_PER_CENT = 10n

export const topUpLimits = {
  /** Smallest top-up: $5. */
  min_credits: 5_000n,
  /** Largest single top-up: $5,000. */
  max_credits: 5_000_000n
} as const

/** The new-account cap: at most this many credits added in the org's first days. */
export const topUpCap = {
  credits: 200_000n,
  days: commonLimits.new_account_topup_cap_days
} as const

export type AmountProblem = { readonly problem: string }

const wholeDigits = /^\d+$/
const usdPattern = /^(\d+)(?:\.(\d{1,2}))?$/

/**
 * Credits of a top-up given as `credits` (whole credits, a number or a string of digits)
 * or `amount_usd` (dollars with at most two decimals). Anything else, zero, negative,
 * fractional credits or a fraction of a cent is a problem (`invalid_amount`).
 */
export const topUpCredits = (
  input: { readonly credits?: unknown; readonly amount_usd?: unknown }
): bigint | AmountProblem => {
  const hasCredits = input.credits !== undefined && input.credits !== null
  const hasUsd = input.amount_usd !== undefined && input.amount_usd !== null
  if (hasCredits === hasUsd) return { problem: "Give exactly one of credits or amount_usd" }
  let credits: bigint
  if (hasCredits) {
    const raw = input.credits
    const text = typeof raw === "number"
      ? (Number.isSafeInteger(raw) ? String(raw) : "x")
      : typeof raw === "string"
      ? raw.trim()
      : "x"
    if (typeof raw === "number" && raw < 0) return { problem: "credits must be positive" }
    if (text.startsWith("-")) return { problem: "credits must be positive" }
    if (!wholeDigits.test(text)) {
      return { problem: "credits must be a whole number of credits (a number or a string of digits)" }
    }
    credits = BigInt(text)
  } else {
    const raw = input.amount_usd
    const text = typeof raw === "number"
      ? (Number.isFinite(raw) ? String(raw) : "x")
      : typeof raw === "string"
      ? raw.trim()
      : "x"
    if (text.startsWith("-")) return { problem: "amount_usd must be positive" }
    const match = usdPattern.exec(text)
    if (match === null) {
      return { problem: "amount_usd must be a USD amount with at most two decimals, e.g. \"25\" or \"12.50\"" }
    }
    credits = BigInt(match[1]!) * CREDITS_PER_USD + BigInt((match[2] ?? "").padEnd(2, "0")) * CREDITS_PER_CENT
  }
  if (credits <= 0n) return { problem: "A top-up must be more than zero" }
  if (credits % CREDITS_PER_CENT !== 0n) {
    return {
      problem: `Cards are charged in whole cents: credits must be a multiple of ${CREDITS_PER_CENT} (got ${credits})`
    }
  }
  if (credits < topUpLimits.min_credits || credits > topUpLimits.max_credits) {
    return {
      problem: `A top-up is from ${topUpLimits.min_credits} to ${topUpLimits.max_credits} credits ($${
        topUpLimits.min_credits / CREDITS_PER_USD
      } to $${topUpLimits.max_credits / CREDITS_PER_USD}); got ${credits}`
    }
  }
  return credits
}

export const isAmountProblem = (value: bigint | AmountProblem): value is AmountProblem => typeof value !== "bigint"

export interface CapState {
  /** Whether the org is still in its first days. */
  readonly applies: boolean
  readonly limit: bigint
  readonly used: bigint
  readonly remaining: bigint
  readonly endsAt: Date
}

/** The cap at `now` for an org created at `createdAt` that has added (or is adding) `used` credits. */
export const capState = (createdAt: Date, now: number, used: bigint): CapState => {
  const endsAt = new Date(createdAt.getTime() + topUpCap.days * 86_400_000)
  const applies = now < endsAt.getTime()
  const remaining = topUpCap.credits - used
  return { applies, limit: topUpCap.credits, used, remaining: remaining > 0n ? remaining : 0n, endsAt }
}

/** Whether adding `credits` stays within the cap (exactly reaching it is allowed). */
export const withinCap = (cap: CapState, credits: bigint): boolean => !cap.applies || cap.used + credits <= cap.limit

// -- USD to INR --------------------------------------------------------------------------

/** A decimal written as digits with a point, held exactly as an integer and a scale. */
interface Decimal {
  readonly units: bigint
  readonly scale: number
}

const decimalPattern = /^(\d+)(?:\.(\d+))?$/

export const parseDecimal = (text: string): Decimal | undefined => {
  const match = decimalPattern.exec(text.trim())
  if (match === null) return undefined
  const fraction = match[2] ?? ""
  return { units: BigInt(match[1]! + fraction), scale: fraction.length }
}

/** Decimal places of the INR-per-USD rate we compute, record and convert with. */
export const FX_RATE_SCALE = 4

const pow10 = (n: number) => 10n ** BigInt(n)

/** `value` rounded half up to `scale` decimals, from the exact fraction numerator/denominator. */
const roundHalfUp = (numerator: bigint, denominator: bigint) => (numerator * 2n + denominator) / (denominator * 2n)

/**
 * INR per USD from the ECB's EUR-based rates (INR per EUR / USD per EUR), rounded half up to
 * four decimals, written as a decimal string ("83.1234").
 */
export const inrPerUsd = (usdPerEur: string, inrPerEur: string): string | undefined => {
  const usd = parseDecimal(usdPerEur)
  const inr = parseDecimal(inrPerEur)
  if (usd === undefined || inr === undefined || usd.units === 0n || inr.units === 0n) return undefined
  // (inr.units / 10^inr.scale) / (usd.units / 10^usd.scale) * 10^FX_RATE_SCALE
  const numerator = inr.units * pow10(usd.scale + FX_RATE_SCALE)
  const denominator = usd.units * pow10(inr.scale)
  const scaled = roundHalfUp(numerator, denominator)
  const text = scaled.toString().padStart(FX_RATE_SCALE + 1, "0")
  return `${text.slice(0, -FX_RATE_SCALE)}.${text.slice(-FX_RATE_SCALE)}`
}

/** Paise for a USD amount in cents at an INR-per-USD rate (the recorded one), rounded half up. */
export const usdCentsToPaise = (cents: bigint, rate: string): bigint => {
  const r = parseDecimal(rate)
  if (r === undefined) throw new Error(`Not a rate: ${rate}`)
  // cents/100 USD * rate INR/USD * 100 paise/INR = cents * rate
  return roundHalfUp(cents * r.units, pow10(r.scale))
}

/** "1234.50" for minor units of a two-decimal currency. */
export const minorToDecimal = (minor: bigint): string => {
  const negative = minor < 0n
  const abs = negative ? -minor : minor
  return `${negative ? "-" : ""}${abs / 100n}.${(abs % 100n).toString().padStart(2, "0")}`
}

/**
 * Minor units of a record (cents, paise) written as the wire's two-decimal text ("1234.50"),
 * read back from it. `description` goes on the text, the only side the document shows.
 */
export const MinorUnitsFromDecimal = (description?: string) =>
  Schema.transformOrFail(
    description === undefined ? Schema.String : Schema.String.annotations({ description }),
    Schema.BigIntFromSelf.annotations({ title: undefined, description: undefined }),
    {
      strict: true,
      decode: (text, _, ast) => {
        const match = /^(-?)(\d+)\.(\d{2})$/.exec(text)
        return match === null
          ? ParseResult.fail(new ParseResult.Type(ast, text, "Expected an amount with two decimals"))
          : ParseResult.succeed(BigInt(`${match[1]}${match[2]}${match[3]}`))
      },
      encode: (minor) => ParseResult.succeed(minorToDecimal(minor))
    }
  )

// -- Money given back --------------------------------------------------------------------

/**
 * A payment's dispute: opened, then closed won or lost. Events come in any order, so the
 * status only moves forward: a closed dispute stays closed, whatever arrives after.
 */
export type DisputeStatus = "open" | "won" | "lost"

export const nextDisputeStatus = (current: DisputeStatus | null, seen: DisputeStatus): DisputeStatus =>
  current === "won" || current === "lost" ? current : seen

/** A dispute open or lost holds the payment's money (and freezes the org's credits); a won one gave it back. */
export const disputeHoldsMoney = (status: DisputeStatus | null): boolean => status === "open" || status === "lost"

/** What a payment has become: paid or not, and what went back to the card holder so far. */
export interface PaymentFacts {
  readonly amountMinor: bigint
  /** Credits the payment bought. */
  readonly credits: bigint
  /** Whether it was paid (and credited). */
  readonly paid: boolean
  /** Refunded so far (Stripe's `amount_refunded`: cumulative). */
  readonly refundedMinor: bigint
  readonly disputedMinor: bigint
  readonly disputeStatus: DisputeStatus | null
}

/**
 * Money the card holder has back: refunds plus a dispute that holds money. A refund and a
 * dispute never return the same money twice, so together they are at most the payment.
 */
export const returnedMinor = (payment: PaymentFacts, withDispute = true): bigint => {
  const disputed = withDispute && disputeHoldsMoney(payment.disputeStatus) ? payment.disputedMinor : 0n
  const returned = payment.refundedMinor + disputed
  return returned < payment.amountMinor ? returned : payment.amountMinor
}

/**
 * Credits taken back for the money returned, in proportion to the credits bought and
 * rounded up (credits for money given back are never kept); none until it is paid.
 * `withDispute: false` counts the refunds alone.
 */
export const creditsTakenBack = (payment: PaymentFacts, withDispute = true): bigint =>
  !payment.paid || payment.amountMinor <= 0n
    ? 0n
    : (payment.credits * returnedMinor(payment, withDispute) + payment.amountMinor - 1n) / payment.amountMinor
