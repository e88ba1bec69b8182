import type { CostReport } from "../../Domain/Catalogue.js"

/**
 * Reads what a provider says a call cost, in whole credits (1 credit = $0.001), from the
 * place its catalogue record names: a header or a dotted path in the JSON body, in USD or
 * credits. Decimal text is converted exactly (no floating point) and rounded up to a
 * whole credit. Anything unreadable or negative counts as no report.
 */
const DECIMAL = /^\s*(\d+)(?:\.(\d+))?\s*$/

/** ceil(decimal x 10^shift) for a non-negative decimal string, or null. */
export const decimalToUnits = (text: string, shift: number): bigint | null => {
  const match = DECIMAL.exec(text)
  if (!match) return null
  const whole = match[1]!
  const fraction = match[2] ?? ""
  const kept = fraction.slice(0, shift).padEnd(shift, "0")
  const rest = fraction.slice(shift)
  const units = BigInt(whole + kept)
  return /[1-9]/.test(rest) ? units + 1n : units
}

const numberText = (value: unknown): string | null => {
  if (typeof value === "string") return value
  if (typeof value === "number" && Number.isFinite(value) && value >= 0) {
    // Enough digits for any real price, without exponent notation.
    return value.toFixed(12)
  }
  return null
}

const atPath = (data: unknown, path: string): unknown => {
  let current: unknown = data
  for (const key of path.split(".").filter((part) => part.length > 0)) {
    if (current === null || typeof current !== "object") return undefined
    current = (current as Record<string, unknown>)[key]
  }
  return current
}

export const readReportedCost = (
  report: CostReport | null,
  headers: Readonly<Record<string, string>>,
  data: unknown
): bigint | null => {
  if (report === null) return null
  const raw = report.in === "header" ? headers[report.name.toLowerCase()] : atPath(data, report.path)
  const text = numberText(raw)
  if (text === null) return null
  return decimalToUnits(text, report.unit === "usd" ? 3 : 0)
}
