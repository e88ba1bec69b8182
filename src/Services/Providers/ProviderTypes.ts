import type { HttpMethod } from "../../Domain/Catalogue.js"

/** The caller's parameters, passed through to the provider. */
export interface CallParams {
  readonly query: Readonly<Record<string, unknown>> | undefined
  readonly body: Readonly<Record<string, unknown>> | undefined
  readonly pathParams: Readonly<Record<string, unknown>>
}

/** A request ready to send. */
export interface ProviderRequest {
  readonly method: HttpMethod
  readonly url: string
  readonly headers: Readonly<Record<string, string>>
  readonly body: string | undefined
}

/** What came back, before it is judged. */
export interface ProviderAnswer {
  readonly status: number
  readonly headers: Readonly<Record<string, string>>
  readonly body: string
}

/**
 * How a provider call ended:
 * - `answered`: a 2xx answer (an empty one too); it is charged, at most the reported cost;
 * - `refused`: a 4xx answer; nothing charged;
 * - `failed`: a 5xx, a 3xx (redirects are not followed) or a network error; nothing charged;
 * - `timed_out`: no answer within the timeout; nothing charged.
 */
export type ProviderOutcome =
  | { readonly _tag: "answered"; readonly status: number; readonly data: unknown; readonly reportedCost: bigint | null }
  | { readonly _tag: "refused"; readonly status: number; readonly data: unknown }
  | { readonly _tag: "failed"; readonly status: number | null; readonly data: unknown; readonly reason: string }
  | { readonly _tag: "timed_out" }
