import { Config, Effect, Option, Redacted } from "effect"
import { AppConfig } from "../AppConfig.js"

/**
 * Billing settings from the environment. The payment provider is Stripe when
 * STRIPE_SECRET_KEY is set (then STRIPE_PUBLISHABLE_KEY and STRIPE_WEBHOOK_SECRET are
 * required too); without it, development runs the payment sandbox (the Stripe emulator on
 * loopback, spoken to by the same code) and production switches billing off (503
 * `not_configured`).
 */
export const ECB_DAILY_RATES_URL = "https://www.ecb.europa.eu/stats/eurofxref/eurofxref-daily.xml"

export interface StripeSettings {
  readonly secretKey: Redacted.Redacted<string>
  readonly publishableKey: string
  readonly webhookSecret: Redacted.Redacted<string>
  /** Another address for the Stripe API (tests only). */
  readonly apiBase: Option.Option<string>
}

/**
 * Price ids of the plans named by settings (STRIPE_PRICE_PRO, STRIPE_PRICE_MAX,
 * STRIPE_PRICE_PRO_FOUNDING); a plan without one uses the price with its lookup key,
 * made on start when missing.
 */
export interface PlanPriceSettings {
  readonly pro: string | null
  readonly max: string | null
  readonly founding: string | null
}

export type PaymentMode =
  | { readonly _tag: "stripe"; readonly stripe: StripeSettings }
  | { readonly _tag: "sandbox" }
  | { readonly _tag: "off" }

export class BillingConfig extends Effect.Service<BillingConfig>()("Billing/BillingConfig", {
  effect: Effect.gen(function*() {
    const app = yield* AppConfig
    const secretKey = yield* Config.option(Config.redacted("STRIPE_SECRET_KEY"))
    const publishableKey = yield* Config.option(Config.string("STRIPE_PUBLISHABLE_KEY"))
    const webhookSecret = yield* Config.option(Config.redacted("STRIPE_WEBHOOK_SECRET"))
    const apiBase = yield* Config.option(Config.string("STRIPE_API_BASE"))
    let mode: PaymentMode
    if (Option.isSome(secretKey)) {
      if (Option.isNone(publishableKey) || Option.isNone(webhookSecret)) {
        return yield* Effect.dieMessage(
          "STRIPE_SECRET_KEY is set: STRIPE_PUBLISHABLE_KEY and STRIPE_WEBHOOK_SECRET are required too"
        )
      }
      if (Option.isSome(apiBase) && app.isProduction) {
        yield* Effect.logWarning(`STRIPE_API_BASE is set in production: Stripe requests go to ${apiBase.value}`)
      }
      mode = {
        _tag: "stripe",
        stripe: {
          secretKey: secretKey.value,
          publishableKey: publishableKey.value,
          webhookSecret: webhookSecret.value,
          apiBase
        }
      }
    } else {
      mode = app.isProduction ? { _tag: "off" } : { _tag: "sandbox" }
    }
    const priceId = (name: string) => Config.option(Config.string(name)).pipe(Effect.map(Option.getOrNull))
    const planPrices: PlanPriceSettings = {
      pro: yield* priceId("STRIPE_PRICE_PRO"),
      max: yield* priceId("STRIPE_PRICE_MAX"),
      founding: yield* priceId("STRIPE_PRICE_PRO_FOUNDING")
    }
    const integer = (name: string, fallback: number) => Config.integer(name).pipe(Config.withDefault(fallback))
    return {
      mode,
      planPrices,
      /** How long a payment-provider request may take before it counts as no answer. */
      providerTimeoutMs: yield* integer("PAYMENT_PROVIDER_TIMEOUT_MS", 20_000),
      /** An unpaid payment is cancelled after this long (its cap allowance and offer seat come back). */
      paymentExpiryMs: yield* integer("PAYMENT_EXPIRY_MS", 60 * 60 * 1000),
      fxRatesUrl: yield* Config.string("FX_RATES_URL").pipe(Config.withDefault(ECB_DAILY_RATES_URL)),
      /** A rate fetched longer ago than this is too old to charge INR with. */
      fxMaxAgeMs: (yield* integer("FX_MAX_AGE_HOURS", 36)) * 3_600_000,
      fxRefreshMs: yield* integer("FX_REFRESH_INTERVAL_MS", 60 * 60 * 1000),
      /** How often billing's background duties look for work when nothing woke them. */
      workerIntervalMs: yield* integer("BILLING_WORKER_INTERVAL_MS", 5_000),
      /** After a failed auto-reload charge, the next try waits this long. */
      autoReloadRetryMs: yield* integer("AUTO_RELOAD_RETRY_MS", 60 * 60 * 1000)
    } as const
  }),
  dependencies: [AppConfig.Default]
}) {}
