import type { ApprovalRequired, CheckFailed } from "@agent-gateway/contract/Errors/ApiErrors.js"
import { Api } from "@agent-gateway/contract/Http/Api.js"
import { FetchHttpClient, HttpApiClient, HttpClient, HttpClientRequest } from "@effect/platform"
import { Cause, Duration, Effect, Exit, FiberRef, Layer, Option } from "effect"
import { randomUUID } from "node:crypto"
import { clientError, isErrorCode, ServiceError, serviceError } from "./errors.js"
import {
  checkPaymentIdentifier,
  type Paid,
  type Payer,
  payingClient,
  paymentFailure,
  type PaymentLimits,
  type PaymentSeen,
  paymentSeen
} from "./payments.js"
import { type RetryPolicy, retryPolicy, retrySchedule } from "./retry.js"

/**
 * The client of the Agent Purchasing and Gateway Service, derived from the service's own
 * HttpApi contract (`HttpApiClient`), so its requests and answers cannot drift from the
 * server's. The Effect API (`makeAgentGateway`) gives the typed client and `run`, which applies
 * the retry rules; the Promise API (`AgentGateway`) wraps it for everyone else.
 */
/**
 * The address used when neither `baseUrl` nor SERVICE_API_URL is given: the service's own
 * BASE_URL with nothing configured (`npm start`). Each deployment has its own BASE_URL, so
 * there is no public one to name (docs/decisions.md, "Installing the clients").
 */
export const DEFAULT_BASE_URL = "http://localhost:8080"

export interface ClientOptions {
  /** The agent (or org) key; default `SERVICE_API_KEY`. Not needed with a `payer`. */
  readonly apiKey?: string | undefined
  /**
   * A wallet that pays per request with x402 when the service asks (402 `PAYMENT-REQUIRED`):
   * `gateway.call` and `gateway.execute` without a key. A viem account
   * (`privateKeyToAccount(...)`) will do. See docs/x402-and-signatures.md.
   */
  readonly payer?: Payer | undefined
  /**
   * The x402 client's limits on what the payer signs (`@x402/core`'s spend controls): by
   * default at most $1 a payment, in the stablecoins it knows. `false`: none.
   */
  readonly spendControls?: PaymentLimits | false | undefined
  /** The service's address (its BASE_URL); default `SERVICE_API_URL`, else `DEFAULT_BASE_URL`. */
  readonly baseUrl?: string | undefined
  /** Retries after the first try (default 3; 0 for none). */
  readonly maxRetries?: number | undefined
  /** How long one try may take (default 60 s). */
  readonly timeoutMs?: number | undefined
  /** The jitter's random numbers in [0, 1) (tests). */
  readonly random?: (() => number) | undefined
  /** How to wait between tries (tests inject one that records); default the Effect clock. */
  readonly sleep?: ((ms: number) => Promise<void>) | undefined
}

/**
 * What the answer of one try said beside its body: its status and `Retry-After`. Each try
 * puts a fresh holder in this FiberRef; the client's response hook fills it in (a mutable
 * holder, so it is seen whichever fiber the request ran on).
 */
interface AnswerSeen {
  status: number | null
  retryAfter: number | null
}
const answerSeen = FiberRef.unsafeMake<AnswerSeen>({ status: null, retryAfter: null })

const makeApiClient = (baseUrl: string, apiKey: string | undefined, options: ClientOptions = {}) =>
  HttpApiClient.make(Api, {
    baseUrl,
    transformClient: (client) =>
      (options.payer === undefined
        ? client
        : payingClient(client, options.payer, {
          spendControls: options.spendControls,
          newIdentifier: newIdempotencyKey
        }))
        .pipe(
          HttpClient.mapRequest((request) =>
            apiKey === undefined ? request : HttpClientRequest.bearerToken(request, apiKey)
          ),
          HttpClient.tap((response) =>
            Effect.map(FiberRef.get(answerSeen), (seen) => {
              const header = response.headers["retry-after"]
              const seconds = header === undefined ? Number.NaN : Number(header)
              seen.status = response.status
              seen.retryAfter = Number.isFinite(seconds) ? seconds : null
            })
          )
        )
  })

/** The typed client of the contract: `api.purchasing.execute({ payload })`, `api.gateway.call(...)`, ... */
export type ApiClient = Effect.Effect.Success<ReturnType<typeof makeApiClient>>

const detailsOf = (error: object): Record<string, unknown> => {
  const { _tag: _t, message: _m, ...rest } = { ...error } as Record<string, unknown>
  return rest
}

const statusOf = (error: unknown): number | null => {
  const response = (error as { response?: { status?: unknown } }).response
  return typeof response?.status === "number" ? response.status : null
}

/** Any failure of one try as the client's error (the service's code, or a client-side code). */
export const toServiceError = (
  error: unknown,
  retryAfter: number | null,
  seenStatus: number | null = null
): ServiceError => {
  if (error instanceof ServiceError) return error
  const unpaid = paymentFailure(error)
  if (unpaid !== undefined) return unpaid
  const tag = (error as { _tag?: unknown } | null)?._tag
  if (typeof tag === "string" && isErrorCode(tag)) {
    const own = (error as { constructor?: { httpStatus?: number } }).constructor?.httpStatus
    return serviceError(tag, (error as Error).message, detailsOf(error as object), retryAfter, own)
  }
  if (tag === "RequestError") return clientError("network_error", `Could not reach the service: ${String(error)}`)
  const status = statusOf(error) ?? seenStatus
  if (status !== null && status >= 300 && status < 400) {
    return clientError("unexpected_redirect", `The service answered a redirect (${status}); redirects are not followed`)
  }
  return clientError(
    "http_error",
    `An answer without the service's error body${status === null ? "" : ` (HTTP ${status})`}`,
    status ?? 0
  )
}

/** The service's success variants that carry an error body, as the errors they are. */
const errorAnswer = (value: unknown): ServiceError | null => {
  const tag = (value as { _tag?: unknown } | null)?._tag
  return typeof tag === "string" && isErrorCode(tag) && (value as object) instanceof Error
    ? toServiceError(value, null)
    : null
}

/** An answer without the success variants that carry an error body (they fail instead). */
export type ErrorFree<A> = Exclude<A, ApprovalRequired | CheckFailed>

export interface RunOptions {
  /**
   * With a payer: the x402 `payment-identifier` every try of this call carries (16 to 128
   * letters, digits, `-` or `_`); default a fresh one per call. An execute's is its idempotency key.
   */
  readonly paymentIdentifier?: string | undefined
}

export interface AgentGatewayEffect {
  /** The typed client, one try per call, no retries. */
  readonly api: ApiClient
  /**
   * Runs one call with the retry rules: each try at most `timeoutMs`, retried while the
   * error is retryable, waiting `Retry-After` (up to 60 s) or backing off. Fails with
   * `ServiceError`. Answers that carry an error body (`check_failed`, `approval_required`)
   * fail too. A call paid with x402 answers its settlement as `payment`.
   */
  readonly run: <A, E>(
    call: (api: ApiClient) => Effect.Effect<A, E>,
    options?: RunOptions
  ) => Effect.Effect<Paid<ErrorFree<A>>, ServiceError>
  readonly policy: RetryPolicy
}

/** The key and address the client uses: given, else from the environment. */
export const resolveOptions = (options: ClientOptions) => {
  const apiKey = options.apiKey ?? process.env["SERVICE_API_KEY"]
  if (apiKey === undefined || apiKey.length === 0) throw new Error("No API key: pass apiKey or set SERVICE_API_KEY")
  return { apiKey, baseUrl: baseUrlOf(options) }
}

const baseUrlOf = (options: ClientOptions) =>
  (options.baseUrl ?? process.env["SERVICE_API_URL"] ?? DEFAULT_BASE_URL).replace(/\/+$/, "")

/** The key (none for a payer without one) and the address. */
export const resolveCredentials = (options: ClientOptions): { apiKey: string | undefined; baseUrl: string } => {
  const apiKey = options.apiKey ?? process.env["SERVICE_API_KEY"]
  if (options.payer !== undefined && (apiKey === undefined || apiKey.length === 0)) {
    return { apiKey: undefined, baseUrl: baseUrlOf(options) }
  }
  return resolveOptions(options)
}

/** The Effect API. Needs an `HttpClient` (see `clientLayer`: fetch that never follows redirects). */
export const makeAgentGateway = (options: ClientOptions = {}) =>
  Effect.gen(function*() {
    const { apiKey, baseUrl } = resolveCredentials(options)
    const api = yield* makeApiClient(baseUrl, apiKey, options)
    const policy = retryPolicy({ maxRetries: options.maxRetries, random: options.random })
    const timeout = Duration.millis(options.timeoutMs ?? 60_000)
    const retries = retrySchedule(policy, options.sleep)

    const run = <A, E>(
      call: (api: ApiClient) => Effect.Effect<A, E>,
      runOptions: RunOptions = {}
    ): Effect.Effect<Paid<ErrorFree<A>>, ServiceError> => {
      // One holder for all the tries: they carry one payment-identifier.
      const payment: PaymentSeen = {
        identifier: options.payer === undefined || runOptions.paymentIdentifier === undefined
          ? null
          : checkPaymentIdentifier(runOptions.paymentIdentifier),
        response: null
      }
      const once = Effect.suspend(() => {
        payment.response = null
        const seen: AnswerSeen = { status: null, retryAfter: null }
        return call(api).pipe(
          Effect.timeoutFail({ duration: timeout, onTimeout: () => clientError("timeout", "No answer in time") }),
          Effect.mapError((error) => toServiceError(error, seen.retryAfter, seen.status)),
          Effect.flatMap((value) => {
            const failed = errorAnswer(value)
            return failed === null ? Effect.succeed(value as ErrorFree<A>) : Effect.fail(failed)
          }),
          Effect.locally(answerSeen, seen)
        )
      })
      return Effect.retry(once, retries).pipe(
        Effect.map((answer): Paid<ErrorFree<A>> =>
          payment.response === null || typeof answer !== "object" || answer === null
            ? answer as Paid<ErrorFree<A>>
            : { ...answer, payment: payment.response }
        ),
        Effect.locally(paymentSeen, payment)
      )
    }

    return { api, run, policy } satisfies AgentGatewayEffect
  })

/** fetch, never following redirects (a redirect answers `unexpected_redirect`). */
export const clientLayer = FetchHttpClient.layer.pipe(
  Layer.provide(Layer.succeed(FetchHttpClient.RequestInit, { redirect: "manual" }))
)

/** Runs an effect of the client to a Promise; the caller's signal aborts it (`aborted`). */
export const runToPromise = async <A>(
  effect: Effect.Effect<A, ServiceError, HttpClient.HttpClient>,
  signal?: AbortSignal
): Promise<A> => {
  if (signal?.aborted) throw clientError("aborted", "The caller aborted the request")
  const exit = await Effect.runPromiseExit(effect.pipe(Effect.provide(clientLayer)), signal ? { signal } : undefined)
  if (Exit.isSuccess(exit)) return exit.value
  const failure = Cause.failureOption(exit.cause)
  if (Option.isSome(failure)) throw failure.value
  if (Cause.isInterruptedOnly(exit.cause)) throw clientError("aborted", "The caller aborted the request")
  throw Cause.squash(exit.cause)
}

/** A fresh idempotency key, kept over every try of one execute. */
export const newIdempotencyKey = () => `ts-${randomUUID()}`
