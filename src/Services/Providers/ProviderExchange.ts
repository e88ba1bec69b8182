import type { Dispatcher } from "@effect/platform-node/Undici"
import { Effect } from "effect"
import type { ProviderAnswer, ProviderRequest } from "./ProviderTypes.js"

/** How one HTTP exchange with a provider ended. */
export type Exchange =
  | { readonly _tag: "answer"; readonly answer: ProviderAnswer }
  | { readonly _tag: "timed_out" }
  | { readonly _tag: "unreachable"; readonly reason: string }

const deadlinePassed = new Error("the provider's deadline passed")

const flatHeaders = (headers: Record<string, string | Array<string> | undefined>) => {
  const flat: Record<string, string> = {}
  for (const name in headers) {
    const value = headers[name]
    if (value !== undefined) flat[name] = Array.isArray(value) ? value.join(", ") : value
  }
  return flat
}

/**
 * Sends one request on the service's undici dispatcher (pooled keep-alive connections per
 * origin) and reads the whole answer, within `timeoutMs` from the start to the last byte.
 * The deadline aborts the request itself, so a call costs no racing fiber or timer fiber;
 * an interrupted exchange aborts it too. Never fails: every ending is an `Exchange`.
 */
export const exchange = (dispatcher: Dispatcher, request: ProviderRequest, timeoutMs: number) =>
  Effect.async<Exchange>((resume) => {
    const abort = new AbortController()
    const deadline = setTimeout(() => abort.abort(deadlinePassed), timeoutMs)
    const url = new URL(request.url)
    dispatcher.request({
      method: request.method,
      origin: url.origin,
      path: url.pathname + url.search,
      headers: request.headers,
      body: request.body ?? null,
      signal: abort.signal,
      // The deadline above covers the whole exchange.
      headersTimeout: 0,
      bodyTimeout: 0
    }).then(
      (response) =>
        response.body.text().then((body): Exchange => ({
          _tag: "answer",
          answer: { status: response.statusCode, headers: flatHeaders(response.headers), body }
        }))
    ).then(
      (ended) => resume(Effect.succeed(ended)),
      (error: unknown) =>
        resume(Effect.succeed<Exchange>(
          abort.signal.reason === deadlinePassed
            ? { _tag: "timed_out" }
            : { _tag: "unreachable", reason: error instanceof Error ? error.message : String(error) }
        ))
    ).finally(() => clearTimeout(deadline))
    return Effect.sync(() => {
      clearTimeout(deadline)
      abort.abort()
    })
  })
