import { Schema } from "effect"
import type { Benchmark } from "./Tool.js"

/**
 * The published ranking formula. Everything is integer arithmetic on published inputs so
 * anyone can recompute `/v1/scores` from `/v1/tools` to the last digit:
 *
 *   parts (each an integer in ten-thousandths, 0..10000, rounded half up):
 *     accuracy = accuracy x 10000            (latest benchmark)
 *     coverage = coverage x 10000            (latest benchmark)
 *     latency  = 10000 x 2000 / (2000 + latency_p50_ms)
 *     price    = 10000 x 100 / (100 + price_per_success_credits), 0 when unpriced
 *   weighted  = 45 x accuracy + 25 x coverage + 15 x latency + 15 x price
 *   score     = round_half_up(weighted / 1000) / 10          (0.0 .. 100.0)
 *
 * Ranking inside a task type: score descending, then price ascending (unpriced last),
 * then slug ascending.
 */
export const FORMULA_VERSION = "2026-11-01"

export const weights = { accuracy: 45, coverage: 25, latency: 15, price: 15 } as const
export const LATENCY_HALF_MS = 2000
export const PRICE_HALF_CREDITS = 100

/** round_half_up(numerator / denominator) for non-negative integers. */
const divRound = (numerator: bigint, denominator: bigint): bigint => (2n * numerator + denominator) / (2n * denominator)

export interface ScoreParts {
  readonly accuracy: number
  readonly coverage: number
  readonly latency: number
  readonly price: number
}

export const scoreParts = (benchmark: Benchmark, pricePerSuccessCredits: number | null): ScoreParts => ({
  accuracy: Number(divRound(BigInt(Math.round(benchmark.accuracy * 1_000_000)), 100n)),
  coverage: Number(divRound(BigInt(Math.round(benchmark.coverage * 1_000_000)), 100n)),
  latency: Number(
    divRound(10_000n * BigInt(LATENCY_HALF_MS), BigInt(LATENCY_HALF_MS + benchmark.latency_p50_ms))
  ),
  price: pricePerSuccessCredits === null
    ? 0
    : Number(divRound(10_000n * BigInt(PRICE_HALF_CREDITS), BigInt(PRICE_HALF_CREDITS + pricePerSuccessCredits)))
})

/** The score on 0..100 with one decimal, from the parts. */
export const scoreOf = (parts: ScoreParts): number => {
  const weighted = weights.accuracy * parts.accuracy + weights.coverage * parts.coverage +
    weights.latency * parts.latency + weights.price * parts.price
  return Number(divRound(BigInt(weighted), 1000n)) / 10
}

export interface Rankable {
  readonly slug: string
  readonly score: number
  readonly price_per_success_credits: number | null
}

export const compareRank = (a: Rankable, b: Rankable): number => {
  if (a.score !== b.score) return b.score - a.score
  const pa = a.price_per_success_credits ?? Number.POSITIVE_INFINITY
  const pb = b.price_per_success_credits ?? Number.POSITIVE_INFINITY
  if (pa !== pb) return pa - pb
  return a.slug < b.slug ? -1 : a.slug > b.slug ? 1 : 0
}

export const ScorePartsSchema = Schema.Struct({
  accuracy: Schema.Int,
  coverage: Schema.Int,
  latency: Schema.Int,
  price: Schema.Int
}).annotations({ identifier: "ScoreParts", description: "Each part in ten-thousandths (0..10000)" })

/** The document served at `/v1/formula`. */
export const formulaDocument = {
  version: FORMULA_VERSION,
  summary: "Tools of a task type are ranked by a weighted score of benchmark accuracy, coverage, latency and price.",
  inputs: {
    accuracy: "latest_benchmark.accuracy from /v1/tools",
    coverage: "latest_benchmark.coverage from /v1/tools",
    latency_p50_ms: "latest_benchmark.latency_p50_ms from /v1/tools",
    price_per_success_credits: "price_per_success.credits from /v1/tools (null when unpriced)"
  },
  parts: {
    accuracy: "round_half_up(accuracy x 10000)",
    coverage: "round_half_up(coverage x 10000)",
    latency: `round_half_up(10000 x ${LATENCY_HALF_MS} / (${LATENCY_HALF_MS} + latency_p50_ms))`,
    price:
      `round_half_up(10000 x ${PRICE_HALF_CREDITS} / (${PRICE_HALF_CREDITS} + price_per_success_credits)), or 0 when unpriced`
  },
  weights,
  weighted: "45 x accuracy + 25 x coverage + 15 x latency + 15 x price",
  score: "round_half_up(weighted / 1000) / 10, a number from 0.0 to 100.0 with one decimal",
  rounding: "round_half_up(n / d) for non-negative integers n, d is floor((2n + d) / 2d); all parts are integers",
  ranking:
    "Within a task type: score descending, then price ascending (unpriced last), then slug ascending. Rank 1 is best.",
  purchasable: "A tool is purchasable when its status is live, it has a price per success and resale rights."
} as const
