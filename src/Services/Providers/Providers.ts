import { NodeHttpClient } from "@effect/platform-node"
import { Config, Effect, Option, Redacted } from "effect"
import type { EndpointWithProvider, Provider } from "../../Domain/Catalogue.js"
import { RequestSigner } from "../BotAuth/RequestSigner.js"
import { readReportedCost } from "./CostReader.js"
import { exchange } from "./ProviderExchange.js"
import type { CallParams, ProviderAnswer, ProviderOutcome, ProviderRequest } from "./ProviderTypes.js"
import { sandboxAnswer } from "./Sandbox.js"

/**
 * The data-driven forwarder: from an endpoint's catalogue record it builds the provider
 * request (path placeholders filled and encoded, query and body passed through), adds
 * the provider's credential from `PROVIDER_<PROVIDER>_API_KEY`, sends it with a timeout
 * (60 s), and judges the answer, reading the cost the provider reports. Every request that
 * leaves for a provider is signed as the service's (Web Bot Auth: `RequestSigner`), unless
 * that provider is switched off.
 *
 * Where traffic goes:
 * - `PROVIDERS_UPSTREAM` set: every call goes to that one base address with the provider
 *   id as the first path segment (tests, a shared sandbox);
 * - else the built-in sandbox when `PROVIDERS_SANDBOX` is true (the default when
 *   `DATABASE_URL` is unset, i.e. the embedded default of `npm start`);
 * - else the provider's own `base_url`.
 */
export const providerEnvName = (providerId: string) =>
  `PROVIDER_${providerId.toUpperCase().replace(/[^A-Z0-9]+/g, "_")}_API_KEY`

export interface AdapterHealth {
  readonly ok: boolean
  readonly problem: string | null
}

export type Route = { readonly _tag: "upstream"; readonly base: string } | { readonly _tag: "sandbox" } | {
  readonly _tag: "direct"
}

const scalarText = (value: unknown): string | undefined => {
  if (value === null || value === undefined) return undefined
  if (typeof value === "string") return value
  if (typeof value === "number" || typeof value === "boolean" || typeof value === "bigint") return String(value)
  return JSON.stringify(value)
}

/** The provider path with every `{name}` replaced by its encoded value. */
export const fillPath = (path: string, values: Readonly<Record<string, unknown>>): string =>
  path.replace(/\{([^}]+)\}/g, (_, name: string) => encodeURIComponent(scalarText(values[name]) ?? ""))

const joinUrl = (base: string, path: string) => `${base.replace(/\/+$/, "")}/${path.replace(/^\/+/, "")}`

/** The request for one call, credential included (when configured). */
export const buildRequest = (
  endpoint: EndpointWithProvider,
  params: CallParams,
  route: Route,
  apiKey: string | undefined
): ProviderRequest => {
  const provider = endpoint.provider
  const base = route._tag === "upstream"
    ? joinUrl(route.base, encodeURIComponent(provider.id))
    : endpoint.base_url ?? provider.base_url
  const url = new URL(joinUrl(base, fillPath(endpoint.path, params.pathParams)))
  for (const [key, value] of Object.entries(params.query ?? {})) {
    if (Array.isArray(value)) {
      for (const item of value) {
        const text = scalarText(item)
        if (text !== undefined) url.searchParams.append(key, text)
      }
    } else {
      const text = scalarText(value)
      if (text !== undefined) url.searchParams.append(key, text)
    }
  }
  const headers: Record<string, string> = { accept: "application/json", "user-agent": "agent-gateway/0.1" }
  if (apiKey !== undefined) {
    if (provider.auth.in === "header") headers[provider.auth.name.toLowerCase()] = `${provider.auth.prefix}${apiKey}`
    else url.searchParams.set(provider.auth.name, apiKey)
  }
  const sendsBody = endpoint.method !== "GET" && params.body !== undefined
  if (sendsBody) headers["content-type"] = "application/json"
  return {
    method: endpoint.method,
    url: url.toString(),
    headers,
    body: sendsBody ? JSON.stringify(params.body) : undefined
  }
}

const parseData = (answer: ProviderAnswer): unknown => {
  if (answer.body.length === 0) return null
  try {
    return JSON.parse(answer.body)
  } catch {
    return answer.body
  }
}

/** Judges an answer: 2xx answered (charged), 4xx refused, anything else failed. */
export const judge = (provider: Provider, answer: ProviderAnswer): ProviderOutcome => {
  const data = parseData(answer)
  if (answer.status >= 200 && answer.status < 300) {
    return {
      _tag: "answered",
      status: answer.status,
      data,
      reportedCost: readReportedCost(provider.cost_report, answer.headers, data)
    }
  }
  if (answer.status >= 400 && answer.status < 500) return { _tag: "refused", status: answer.status, data }
  return { _tag: "failed", status: answer.status, data, reason: `provider answered HTTP ${answer.status}` }
}

export class Providers extends Effect.Service<Providers>()("Providers/Providers", {
  // undici: pooled keep-alive connections per origin, and about half the CPU per call of the
  // node:http client here; its `request` never follows redirects.
  dependencies: [NodeHttpClient.dispatcherLayer, RequestSigner.Default],
  effect: Effect.gen(function*() {
    const dispatcher = yield* NodeHttpClient.Dispatcher
    const signer = yield* RequestSigner
    const upstream = yield* Config.option(Config.string("PROVIDERS_UPSTREAM"))
    const hasDatabase = Option.isSome(yield* Config.option(Config.string("DATABASE_URL")))
    const sandbox = yield* Config.boolean("PROVIDERS_SANDBOX").pipe(Config.withDefault(!hasDatabase))
    const timeoutMs = yield* Config.integer("GATEWAY_TIMEOUT_MS").pipe(Config.withDefault(60_000))
    const route: Route = Option.isSome(upstream)
      ? { _tag: "upstream", base: upstream.value }
      : sandbox
      ? { _tag: "sandbox" }
      : { _tag: "direct" }

    // Credentials are read once per provider from the ambient configuration.
    const apiKeyOf = yield* Effect.cachedFunction((providerId: string) =>
      Effect.gen(function*() {
        // A blank value is no credential: the provider would refuse every call made with it.
        const key = yield* Config.option(Config.redacted(providerEnvName(providerId))).pipe(
          Effect.map(Option.filter((value) => Redacted.value(value).trim().length > 0)),
          Effect.orElseSucceed(() => Option.none<Redacted.Redacted>())
        )
        if (Option.isNone(key) && route._tag === "direct") {
          yield* Effect.logWarning(
            `${providerEnvName(providerId)} is not set; calls to ${providerId} go without a credential`
          )
        }
        return key
      })
    )

    /** The request with the service's signature headers added (none for a provider switched off). */
    const signed = (providerId: string, request: ProviderRequest): Effect.Effect<ProviderRequest> =>
      Effect.map(signer.headersFor(providerId, request.url), (signature) => ({
        ...request,
        headers: { ...request.headers, ...signature }
      }))

    /** Makes the call; never fails: every ending is an outcome. */
    const send = (endpoint: EndpointWithProvider, params: CallParams): Effect.Effect<ProviderOutcome> =>
      Effect.gen(function*() {
        if (route._tag === "sandbox") return judge(endpoint.provider, sandboxAnswer(endpoint, params))
        const key = yield* apiKeyOf(endpoint.provider.id)
        const request = yield* signed(
          endpoint.provider.id,
          buildRequest(endpoint, params, route, Option.getOrUndefined(Option.map(key, Redacted.value)))
        )
        return yield* Effect.map(exchange(dispatcher, request, timeoutMs), (ended): ProviderOutcome => {
          switch (ended._tag) {
            case "answer":
              return judge(endpoint.provider, ended.answer)
            case "timed_out":
              return { _tag: "timed_out" }
            case "unreachable":
              return { _tag: "failed", status: null, data: null, reason: `network error: ${ended.reason}` }
          }
        })
      })

    /**
     * The health check of a provider connection (a tool's adapter): the sandbox always
     * works; otherwise the credential must be configured (whether calls go to the provider
     * or to PROVIDERS_UPSTREAM, which forwards it) and the provider's base address must
     * answer a GET with anything but a 5xx within 10 s. A problem names the setting, never
     * its value.
     */
    const health = (endpoint: EndpointWithProvider): Effect.Effect<AdapterHealth> =>
      Effect.gen(function*() {
        if (route._tag === "sandbox") return { ok: true, problem: null }
        if (Option.isNone(yield* apiKeyOf(endpoint.provider.id))) {
          return { ok: false, problem: `${providerEnvName(endpoint.provider.id)} is not set` }
        }
        const base = route._tag === "upstream"
          ? joinUrl(route.base, `${encodeURIComponent(endpoint.provider.id)}/`)
          : endpoint.base_url ?? endpoint.provider.base_url
        const probe = yield* signed(endpoint.provider.id, {
          method: "GET",
          url: base,
          headers: { accept: "application/json" },
          body: undefined
        })
        return yield* Effect.map(exchange(dispatcher, probe, 10_000), (ended): AdapterHealth => {
          switch (ended._tag) {
            case "answer":
              return ended.answer.status >= 500
                ? { ok: false, problem: `${endpoint.provider.id} answered HTTP ${ended.answer.status}` }
                : { ok: true, problem: null }
            case "timed_out":
              return { ok: false, problem: `${endpoint.provider.id} did not answer in 10 s` }
            case "unreachable":
              return { ok: false, problem: `${endpoint.provider.id} could not be reached (${ended.reason})` }
          }
        })
      })

    return { send, health, route, timeoutMs } as const
  })
}) {}
