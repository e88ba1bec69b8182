import { errorCatalogue, type ErrorCode } from "@agent-gateway/contract/Errors/ErrorCatalogue.js"

/**
 * The errors a caller gets from the Promise API: the service's codes (with the catalogue's
 * status and retry flag) and the client-side codes, status 0, made on this side of the wire.
 */
export type ClientErrorCode =
  | "network_error"
  | "timeout"
  | "connection_failed"
  | "aborted"
  | "http_error"
  | "unexpected_redirect"
  | "payment_failed"

export type AnyErrorCode = ErrorCode | ClientErrorCode

const clientRetryable: ReadonlySet<string> = new Set(["network_error", "timeout", "connection_failed"])

export class ServiceError<C extends AnyErrorCode = AnyErrorCode> extends Error {
  override readonly name = "ServiceError"
  constructor(
    readonly code: C,
    message: string,
    readonly status: number,
    readonly retryable: boolean,
    /** Fields the answer carried beside `error` (`approval`, `reason`, `items`, ...). */
    readonly details: Readonly<Record<string, unknown>> = {},
    /** Seconds the service asked to wait (`Retry-After`), when it said. */
    readonly retryAfter: number | null = null
  ) {
    super(message)
  }
}

/** Narrows an unknown error to one code: `if (isServiceError(error, "insufficient_credits")) ...`. */
export const isServiceError = <C extends AnyErrorCode>(error: unknown, code?: C): error is ServiceError<C> =>
  error instanceof ServiceError && (code === undefined || error.code === code)

export const isErrorCode = (code: string): code is ErrorCode => Object.hasOwn(errorCatalogue, code)

/** An error of the service's catalogue, as the service sent it. */
export const serviceError = (
  code: ErrorCode,
  message: string,
  details: Readonly<Record<string, unknown>> = {},
  retryAfter: number | null = null,
  status?: number
) => {
  const entry = errorCatalogue[code]
  return new ServiceError(code, message, status ?? entry.status, entry.retryable, details, retryAfter)
}

/** An error made by the client: status 0 (`http_error` keeps the HTTP status). */
export const clientError = (code: ClientErrorCode, message: string, status = 0) =>
  new ServiceError(code, message, status, clientRetryable.has(code))
