import { errorCatalogue, isErrorCode } from "@agent-gateway/contract/Errors/ErrorCatalogue.js"
import { Api } from "@agent-gateway/contract/Http/Api.js"
import { FetchHttpClient, HttpApiClient, HttpClient, HttpClientRequest } from "@effect/platform"
import { Cause, Effect, Exit } from "effect"

/**
 * The dashboard's only way to the service: the typed client derived from the HttpApi
 * contract, over fetch with the session cookie (same origin; nothing is kept in storage).
 * A change to the contract breaks this build, not the page.
 */
const makeClient = HttpApiClient.make(Api, { baseUrl: window.location.origin })
export type Client = Effect.Effect.Success<typeof makeClient>

/** An answer the service refused, as the page shows it: its message and its doc_url. */
export class ApiError extends Error {
  override readonly name = "ApiError"
  constructor(
    readonly code: string,
    message: string,
    readonly status: number,
    readonly docUrl: string | null
  ) {
    super(message)
  }
}

const docUrlOf = (code: string) => `${window.location.origin}/docs/errors#${code}`

interface ErrorBody {
  readonly error?: { readonly code?: string; readonly message?: string; readonly doc_url?: string }
}

/** An error answer the contract does not list for that endpoint still carries the common body. */
const fromBody = (status: number, body: unknown): ApiError | null => {
  const error = (body as ErrorBody | null)?.error
  return typeof error?.code === "string"
    ? new ApiError(error.code, error.message ?? error.code, status, error.doc_url ?? docUrlOf(error.code))
    : null
}

const toApiErrorEffect = (error: unknown): Effect.Effect<ApiError> => {
  const response = error as { _tag?: string; response?: { status: number; json: Effect.Effect<unknown, unknown> } }
  if (response._tag === "ResponseError" && response.response !== undefined) {
    const status = response.response.status
    return response.response.json.pipe(
      Effect.map((body) => fromBody(status, body) ?? toApiError(error)),
      Effect.orElseSucceed(() => toApiError(error))
    )
  }
  return Effect.succeed(toApiError(error))
}

const toApiError = (error: unknown): ApiError => {
  const tag = (error as { _tag?: unknown } | null)?._tag
  if (typeof tag === "string" && isErrorCode(tag)) {
    return new ApiError(tag, (error as Error).message, errorCatalogue[tag].status, docUrlOf(tag))
  }
  if (tag === "RequestError") {
    return new ApiError("network_error", "Could not reach the service. Retry in a moment.", 0, null)
  }
  const status = (error as { response?: { status?: number } }).response?.status ?? 0
  return new ApiError(
    "unexpected_answer",
    `The service answered something this page did not expect (HTTP ${status}).`,
    status,
    null
  )
}

let client: Client | undefined
const clientNow = Effect.suspend(() =>
  client !== undefined ? Effect.succeed(client) : Effect.tap(makeClient, (made) => Effect.sync(() => (client = made)))
)

/** Resolves with the answer, or rejects with the ApiError itself (not wrapped in a fiber failure). */
const run = <A, E>(
  client: Effect.Effect<Client, never, HttpClient.HttpClient>,
  call: (client: Client) => Effect.Effect<A, E>
) =>
  Effect.runPromiseExit(
    client.pipe(
      Effect.flatMap(call),
      Effect.catchAll((error) => Effect.flatMap(toApiErrorEffect(error), Effect.fail)),
      Effect.provide(FetchHttpClient.layer)
    )
  ).then((exit) => Exit.isSuccess(exit) ? exit.value : Promise.reject(Cause.squash(exit.cause)))

/** Runs one call of the typed client with the session cookie: `api((c) => c.agents.list({ path: { orgId } }))`. */
export const api = <A, E>(call: (client: Client) => Effect.Effect<A, E>): Promise<A> => run(clientNow, call)

/**
 * The same with a bearer token the page holds in memory only (an administrator's session,
 * which the service answers as a token, not a cookie).
 */
export const apiWithToken = <A, E>(token: string, call: (client: Client) => Effect.Effect<A, E>): Promise<A> =>
  run(
    HttpApiClient.make(Api, {
      baseUrl: window.location.origin,
      transformClient: HttpClient.mapRequest(HttpClientRequest.bearerToken(token))
    }),
    call
  )

export const isApiError = (error: unknown, code?: string): error is ApiError =>
  error instanceof ApiError && (code === undefined || error.code === code)
