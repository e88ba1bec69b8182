import { Schema } from "effect"

/**
 * When a tool may be sold. Publishing (and resuming) checks every gate and answers the first
 * that fails with its own error; a live tool that loses a gate later (its benchmark ages
 * past 35 days, its adapter fails its health check) stops being purchasable on its own,
 * without anyone acting, because these gates are evaluated whenever a tool is read.
 */
export const ToolGate = Schema.Literal(
  "resale_rights_missing",
  "price_missing",
  "adapter_not_ready",
  "benchmark_missing",
  "below_accuracy_floor"
)
export type ToolGate = typeof ToolGate.Type

export const BENCHMARK_MAX_AGE_DAYS = 35
export const ACCURACY_FLOOR = 0.6
const DAY_MS = 86_400_000

export interface GateFacts {
  readonly resale_rights: boolean
  /** The price in effect now (see priceAt). */
  readonly price: bigint | null
  /** The adapter's last health check: null when never checked (not held against the tool). */
  readonly adapter_ok: boolean | null
  /** The latest benchmark report: its day (YYYY-MM-DD) and accuracy. */
  readonly benchmark: { readonly date: string; readonly accuracy: number } | null
}

/** The gates a tool fails at `now`, in the order publishing checks them. */
export const failedGates = (facts: GateFacts, now: Date): ReadonlyArray<ToolGate> => {
  const failed: Array<ToolGate> = []
  if (!facts.resale_rights) failed.push("resale_rights_missing")
  if (facts.price === null) failed.push("price_missing")
  if (facts.adapter_ok === false) failed.push("adapter_not_ready")
  const benchmarkAt = facts.benchmark === null ? Number.NaN : Date.parse(`${facts.benchmark.date}T00:00:00Z`)
  // Counted in whole days (UTC): a report dated 35 days before today still counts.
  const ageDays = Math.floor(now.getTime() / DAY_MS) - Math.floor(benchmarkAt / DAY_MS)
  if (Number.isNaN(benchmarkAt) || ageDays > BENCHMARK_MAX_AGE_DAYS) {
    failed.push("benchmark_missing")
  } else if (facts.benchmark !== null && facts.benchmark.accuracy < ACCURACY_FLOOR) {
    failed.push("below_accuracy_floor")
  }
  return failed
}

export const gateMessages: { readonly [G in ToolGate]: string } = {
  resale_rights_missing: "the tool has no signed resale rights",
  price_missing: "the tool has no price_per_success_credits",
  adapter_not_ready: "the tool's provider connection failed its health check",
  benchmark_missing: `the tool has no benchmark in the last ${BENCHMARK_MAX_AGE_DAYS} days`,
  below_accuracy_floor: `the tool's latest benchmark accuracy is under the ${ACCURACY_FLOOR * 100}% floor`
}

export interface ScheduledPrice {
  readonly price_per_success_credits: bigint | null
  readonly next_price_credits: bigint | null
  readonly next_price_from: Date | null
}

/** The price per success in effect at `at`: a scheduled price counts from its `valid_from`. */
export const priceAt = (tool: ScheduledPrice, at: Date): bigint | null =>
  tool.next_price_credits !== null && tool.next_price_from !== null && tool.next_price_from.getTime() <= at.getTime()
    ? tool.next_price_credits
    : tool.price_per_success_credits
