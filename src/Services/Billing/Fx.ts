import { FetchHttpClient, HttpClient } from "@effect/platform"
import { SqlClient, SqlSchema } from "@effect/sql"
import { Clock, Effect, Option, Schema } from "effect"
import { inrPerUsd } from "../../Domain/Billing.js"
import { FxRate } from "../../Domain/FxRate.js"
import { FxUnavailable } from "../../Errors/ApiErrors.js"
import { BillingConfig } from "./BillingConfig.js"

/**
 * USD to INR from the European Central Bank's daily reference rates (an XML file listing
 * every currency against EUR; FX_RATES_URL). Fetched at start and every
 * FX_REFRESH_INTERVAL_MS into `fx_rates`, shared by every replica; a rate is used for
 * FX_MAX_AGE_HOURS (default 36) after it was last fetched, so a source that is down for a
 * while does not stop INR at once, and one down for longer pauses INR (`fx_unavailable`)
 * rather than charging at an old rate. USD never depends on it.
 */
export interface EcbRates {
  readonly date: string
  readonly usdPerEur: string
  readonly inrPerEur: string
}

const rateOf = (xml: string, currency: string) =>
  new RegExp(`currency=['"]${currency}['"]\\s+rate=['"]([0-9]+(?:\\.[0-9]+)?)['"]`).exec(xml)?.[1] ??
    new RegExp(`rate=['"]([0-9]+(?:\\.[0-9]+)?)['"]\\s+currency=['"]${currency}['"]`).exec(xml)?.[1]

/** The date and the USD and INR rates of the ECB's daily XML, or undefined when it lacks them. */
export const parseEcbDaily = (xml: string): EcbRates | undefined => {
  const date = /time=['"](\d{4}-\d{2}-\d{2})['"]/.exec(xml)?.[1]
  const usdPerEur = rateOf(xml, "USD")
  const inrPerEur = rateOf(xml, "INR")
  if (date === undefined || usdPerEur === undefined || inrPerEur === undefined) return undefined
  if (inrPerUsd(usdPerEur, inrPerEur) === undefined) return undefined
  return { date, usdPerEur, inrPerEur }
}

export class Fx extends Effect.Service<Fx>()("Billing/Fx", {
  effect: Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const config = yield* BillingConfig
    const client = (yield* HttpClient.HttpClient).pipe(HttpClient.withTracerPropagation(false))

    /** Writes a day's rates (a day fetched again keeps its newest figures). */
    const keep = SqlSchema.void({
      Request: FxRate.insert,
      execute: (rate) =>
        sql`
          INSERT INTO fx_rates ${sql.insert(rate)}
          ON CONFLICT (rate_date) DO UPDATE SET
            usd_per_eur = excluded.usd_per_eur, inr_per_eur = excluded.inr_per_eur, fetched_at = excluded.fetched_at`
    })

    /** Fetches the daily file and keeps its rate; false (logged) when the source failed. */
    const refresh = Effect.gen(function*() {
      const response = yield* client.get(config.fxRatesUrl).pipe(Effect.timeout("10 seconds"))
      if (response.status !== 200) return yield* Effect.fail(`answered ${response.status}`)
      const rates = parseEcbDaily(yield* response.text)
      if (rates === undefined) return yield* Effect.fail("the file has no date, USD or INR rate")
      const now = new Date(yield* Clock.currentTimeMillis)
      yield* keep({
        rate_date: rates.date,
        usd_per_eur: rates.usdPerEur,
        inr_per_eur: rates.inrPerEur,
        fetched_at: now
      })
      return true
    }).pipe(
      Effect.scoped,
      Effect.catchAll((problem) =>
        Effect.as(
          Effect.logWarning(
            `USD/INR rates from ${config.fxRatesUrl}: ${typeof problem === "string" ? problem : problem._tag}`
          ),
          false
        )
      )
    )

    /** The newest rate we have, however old. */
    const latest = SqlSchema.findOne({
      Request: Schema.Void,
      Result: FxRate,
      execute: () =>
        sql`SELECT rate_date, usd_per_eur, inr_per_eur, fetched_at FROM fx_rates ORDER BY fetched_at DESC LIMIT 1`
    })(undefined).pipe(Effect.orDie)

    const isFresh = (rate: FxRate, now: number) => now - rate.fetched_at.getTime() <= config.fxMaxAgeMs

    /** The rate in force now, if it is fresh enough to charge with. */
    const inForce = Effect.gen(function*() {
      const rate = yield* latest
      const now = yield* Clock.currentTimeMillis
      return Option.filter(rate, (r) => isFresh(r, now))
    })

    /** The rate to charge an INR payment with: in force, or fetched now; else `fx_unavailable`. */
    const rateForCharge = Effect.gen(function*() {
      const current = yield* inForce
      if (Option.isSome(current)) return current.value
      yield* refresh
      const again = yield* inForce
      if (Option.isSome(again)) return again.value
      const old = yield* latest
      return yield* new FxUnavailable({
        message: Option.match(old, {
          onNone: () => "No USD to INR rate is available; INR top-ups are paused (USD top-ups work)",
          onSome: (r) =>
            `The last USD to INR rate (${r.rate_date}, fetched ${r.fetched_at.toISOString()}) is too old; INR top-ups are paused (USD top-ups work)`
        })
      })
    })

    return { refresh, latest, inForce, rateForCharge, isFresh } as const
  }),
  dependencies: [BillingConfig.Default, FetchHttpClient.layer]
}) {}
