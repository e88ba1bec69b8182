import { Config, ConfigError, Effect, Either, Option } from "effect"
import { AppConfig } from "../AppConfig.js"

/**
 * x402 settings (docs/x402-and-signatures.md, "Taking payments (x402)"). Off unless
 * X402_ENABLED=true, in every mode. On, a request to `POST /v1/call` or `POST /v1/execute`
 * without a key may pay per request; without a facilitator URL, development starts the
 * facilitator emulator on loopback and production refuses to start.
 */

/** Base Sepolia's USDC: the defaults name a test network, never a main one. */
const DEFAULT_NETWORK = "eip155:84532"
const DEFAULT_ASSET = "0x036CbD53842c5426634e7929541eC2318f3dCF7e"
/** Payments go here in development when X402_PAY_TO is unset (the emulator's ledger only). */
const DEVELOPMENT_PAY_TO = "0x000000000000000000000000000000000000402a"

const isAddress = (value: string) => /^0x[0-9a-fA-F]{40}$/.test(value)

/** A whole number of asset units (beyond 2^53, so not Config.integer). */
const units = (name: string) =>
  Config.string(name).pipe(
    Config.mapOrFail((raw) =>
      /^\d+$/.test(raw.trim())
        ? Either.right(BigInt(raw.trim()))
        : Either.left(ConfigError.InvalidData([name], `${name} must be a whole number, not ${raw}`))
    )
  )

export interface X402Settings {
  readonly enabled: boolean
  /** The address payments are made to. */
  readonly payTo: string
  /** CAIP-2, e.g. `eip155:8453` (Base) or `eip155:84532` (Base Sepolia). */
  readonly network: `${string}:${string}`
  /** The facilitator's base URL; none: the emulator (development only). */
  readonly facilitatorUrl: Option.Option<string>
  /** The token contract paid in, and its EIP-712 domain (name, version) for `exact` (EIP-3009). */
  readonly asset: string
  readonly assetName: string
  readonly assetVersion: string
  /** Asset units (the token's smallest unit) per credit: 1,000 for a 6-decimal dollar token ($0.001 a credit). */
  readonly unitsPerCredit: bigint
  /** Requests a minute per payer address. */
  readonly payerRequestsPerMinute: number
  /** Asset units a payer may spend in a UTC day; none: no cap. */
  readonly payerDailyCapUnits: Option.Option<bigint>
  /** How long an authorisation may stay open (the requirements' `maxTimeoutSeconds`). */
  readonly maxTimeoutSeconds: number
  /** How long the facilitator has for each verify or settle. */
  readonly facilitatorTimeoutMs: number
  /** How often the sweeper looks for payments a crash left unsettled. */
  readonly sweepIntervalMs: number
}

export class X402Config extends Effect.Service<X402Config>()("X402/X402Config", {
  effect: Effect.gen(function*() {
    const app = yield* AppConfig
    const enabled = yield* Config.boolean("X402_ENABLED").pipe(Config.withDefault(false))
    const payTo = yield* Config.option(Config.string("X402_PAY_TO"))
    const facilitatorUrl = yield* Config.option(Config.string("X402_FACILITATOR_URL"))
    const network = yield* Config.string("X402_NETWORK").pipe(Config.withDefault(DEFAULT_NETWORK))
    const asset = yield* Config.string("X402_ASSET").pipe(Config.withDefault(DEFAULT_ASSET))
    const integer = (name: string, fallback: number) => Config.integer(name).pipe(Config.withDefault(fallback))
    const unitsPerCredit = yield* units("X402_UNITS_PER_CREDIT").pipe(Config.withDefault(1000n))
    const dailyCap = yield* Config.option(units("X402_PAYER_DAILY_CAP_UNITS"))
    const refuse = (message: string) => Effect.dieMessage(`X402_ENABLED=true: ${message}`)
    if (enabled) {
      if (app.isProduction && Option.isNone(facilitatorUrl)) {
        return yield* refuse("X402_FACILITATOR_URL is required in production (the emulator runs only in development)")
      }
      if (app.isProduction && Option.isNone(payTo)) {
        return yield* refuse("X402_PAY_TO (the address payments are made to) is required in production")
      }
      if (Option.isSome(payTo) && !isAddress(payTo.value)) {
        return yield* refuse(`X402_PAY_TO is not an address: ${payTo.value}`)
      }
      if (!/^[-a-z0-9]{3,8}:[-_a-zA-Z0-9]{1,32}$/.test(network)) {
        return yield* refuse(`X402_NETWORK must be a CAIP-2 network id (e.g. eip155:8453), not ${network}`)
      }
      if (!isAddress(asset)) return yield* refuse(`X402_ASSET is not a token address: ${asset}`)
      if (unitsPerCredit < 1n) return yield* refuse("X402_UNITS_PER_CREDIT must be 1 or more")
      if (Option.isSome(dailyCap) && dailyCap.value < 1n) {
        return yield* refuse("X402_PAYER_DAILY_CAP_UNITS must be 1 or more (unset it for no cap)")
      }
    }
    return {
      enabled,
      payTo: Option.getOrElse(payTo, () => DEVELOPMENT_PAY_TO),
      network: network as `${string}:${string}`,
      facilitatorUrl: Option.map(facilitatorUrl, (url) => url.replace(/\/+$/, "")),
      asset,
      assetName: yield* Config.string("X402_ASSET_NAME").pipe(Config.withDefault("USDC")),
      assetVersion: yield* Config.string("X402_ASSET_VERSION").pipe(Config.withDefault("2")),
      unitsPerCredit,
      payerRequestsPerMinute: yield* integer("X402_PAYER_REQUESTS_PER_MINUTE", 60),
      payerDailyCapUnits: dailyCap,
      maxTimeoutSeconds: yield* integer("X402_MAX_TIMEOUT_SECONDS", 300),
      facilitatorTimeoutMs: yield* integer("X402_FACILITATOR_TIMEOUT_MS", 20_000),
      sweepIntervalMs: yield* integer("X402_SWEEP_INTERVAL_MS", 10_000)
    } satisfies X402Settings
  })
}) {}

/** What a price in credits costs in the asset's units, at the stated rate. */
export const unitsOf = (credits: bigint, settings: Pick<X402Settings, "unitsPerCredit">): bigint =>
  credits * settings.unitsPerCredit
