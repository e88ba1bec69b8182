import { Config, Effect, Option, Redacted } from "effect"
import { SERVICE_VERSION } from "../Domain/ServiceVersion.js"

/** Settings every part of the service shares, read once from the environment. */
export class AppConfig extends Effect.Service<AppConfig>()("App/AppConfig", {
  effect: Effect.gen(function*() {
    const port = yield* Config.integer("PORT").pipe(Config.withDefault(8080))
    const baseUrl = yield* Config.option(Config.string("BASE_URL"))
    const environment = yield* Config.literal("development", "production")("SERVICE_ENV").pipe(
      Config.withDefault("development" as const)
    )
    const redisUrl = yield* Config.option(Config.redacted("REDIS_URL"))
    const trustedProxies = yield* Config.string("TRUSTED_PROXIES").pipe(
      Config.withDefault(""),
      Config.map((raw) => raw.split(",").map((entry) => entry.trim()).filter((entry) => entry.length > 0))
    )
    // Read by purchasing (which refuses by it) and by an org's usage (which reports it).
    const livePurchasesOpen = yield* Config.boolean("LIVE_EXECUTE_ENABLED").pipe(Config.withDefault(false))
    return {
      port,
      /** BASE_URL when set; otherwise derived from the listening address at start. */
      baseUrl: Option.map(baseUrl, (url) => url.replace(/\/+$/, "")),
      environment,
      isProduction: environment === "production",
      redisUrl: Option.map(redisUrl, Redacted.value),
      trustedProxies,
      /** LIVE_EXECUTE_ENABLED (default false): live agents' purchases call the providers. */
      livePurchasesOpen,
      version: SERVICE_VERSION
    } as const
  })
}) {}
