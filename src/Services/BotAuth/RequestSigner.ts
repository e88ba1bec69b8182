import { Clock, Effect, Option } from "effect"
import { AppConfig } from "../AppConfig.js"
import { BotKeys } from "./BotKeys.js"
import { ProviderSigning } from "./ProviderSigning.js"
import { freshNonce, signRequest } from "./RequestSignature.js"

/**
 * Signs each request the service sends a provider (Web Bot Auth), unless that provider is
 * switched off. `Signature-Agent` names the service's origin (BASE_URL), whose
 * `/.well-known/http-message-signatures-directory` lists the keys.
 */
export class RequestSigner extends Effect.Service<RequestSigner>()("BotAuth/RequestSigner", {
  dependencies: [BotKeys.Default, ProviderSigning.Default],
  effect: Effect.gen(function*() {
    const keys = yield* BotKeys
    const settings = yield* ProviderSigning
    const config = yield* AppConfig
    const agentOrigin = new URL(Option.getOrElse(config.baseUrl, () => `http://localhost:${config.port}`)).origin

    const none: Readonly<Record<string, string>> = {}

    /** The signature headers for a request to `url` of the provider (none when it is switched off). */
    const headersFor = (providerId: string, url: string): Effect.Effect<Readonly<Record<string, string>>> =>
      Effect.flatMap(settings.signs(providerId), (signs) =>
        signs
          ? Effect.map(
            Effect.zip(keys.active, Clock.currentTimeMillis),
            ([key, nowMs]) => signRequest(key, { url, agentOrigin, nowMs, nonce: freshNonce() })
          )
          : Effect.succeed(none))

    return { headersFor, agentOrigin } as const
  })
}) {}
