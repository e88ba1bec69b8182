import { HttpApiError, HttpServerError, HttpServerResponse } from "@effect/platform"
import { Cause, Effect, Option } from "effect"
import type { ErrorCode } from "../../Errors/ErrorCatalogue.js"
import { errorCatalogue } from "../../Errors/ErrorCatalogue.js"
import { encodeApiError, isApiError, wireBody } from "../../Errors/Wire.js"
import { isMissingRecord } from "../Groups/PathIds.js"

/**
 * Turns whatever a request failed with into the common error body: our own errors as they
 * are, the platform's decoding failures as `invalid_input` naming the field (a path id that
 * is not a UUID as its schema says: `not_found`, `Groups/PathIds.ts`), unreadable or
 * oversized bodies as `invalid_input` / `payload_too_large`, and anything else as
 * `internal_error` with the cause logged and nothing of it on the wire.
 */
export const errorResponse = (baseUrl: string, code: ErrorCode, message?: string) =>
  HttpServerResponse.unsafeJson(wireBody(baseUrl, code, message), { status: errorCatalogue[code].status })

const describeDecodeError = (error: HttpApiError.HttpApiDecodeError): string => {
  const issue = error.issues[0]
  if (issue === undefined) return "The request did not match the expected schema"
  const field = issue.path.length > 0 ? issue.path.map(String).join(".") : "body"
  return `Invalid value for \`${field}\`: ${issue.message}`
}

/** A body read that stopped at the size limit, or a body that is not valid JSON. */
const classifyBodyFailure = (error: HttpServerError.RequestError): { code: ErrorCode; message: string } => {
  const cause = error.cause
  if (cause instanceof Error && cause.message === "maxBytes exceeded") {
    return { code: "payload_too_large", message: "Request body is over 1 MB" }
  }
  if (cause instanceof SyntaxError) {
    return { code: "invalid_input", message: `Malformed JSON body: ${cause.message}` }
  }
  return { code: "invalid_input", message: "The request body could not be read" }
}

/** Seconds a client should wait before retrying a 503 `service_unavailable`. */
export const RETRY_AFTER_SECONDS = 1

export const unavailableResponse = (baseUrl: string, message: string) =>
  errorResponse(baseUrl, "service_unavailable", message).pipe(
    HttpServerResponse.setHeader("retry-after", String(RETRY_AFTER_SECONDS))
  )

/**
 * What a failure says about the database, read along its cause chain: no connection came
 * free within DATABASE_ACQUIRE_TIMEOUT_MS (the replica is overloaded), or the database
 * cannot be reached (refused, reset or ended connections, a server shutting down or
 * starting up: PostgreSQL's classes 08 and 57P). Either way the replica is not broken and
 * the request may be retried shortly: 503, not 500.
 */
const unreachableCodes = new Set(["ECONNREFUSED", "ECONNRESET", "EPIPE", "ETIMEDOUT", "EHOSTUNREACH", "EMFILE"])
const databaseTrouble = (u: unknown): "pool_exhausted" | "unreachable" | undefined => {
  // Only a failure of the SQL client counts: the same socket errors elsewhere are not the database's.
  let sql = false
  for (let current = u, depth = 0; current instanceof Error && depth < 6; depth++) {
    if (/timeout exceeded when trying to connect/i.test(current.message)) return "pool_exhausted"
    if ((current as { _tag?: unknown })._tag === "SqlError") sql = true
    const code = (current as { code?: unknown }).code
    const lost = typeof code === "string" &&
        (unreachableCodes.has(code) || code.startsWith("08") || code.startsWith("57P")) ||
      /^Connection terminated|connection error and is not queryable/i.test(current.message)
    if (sql && lost) return "unreachable"
    current = (current as { cause?: unknown }).cause
  }
  return undefined
}

const isRequestError = (u: unknown): u is HttpServerError.RequestError =>
  HttpServerError.isServerError(u) && u._tag === "RequestError"

export const responseForCause = (baseUrl: string, cause: Cause.Cause<unknown>) =>
  Effect.gen(function*() {
    const failure = Cause.failureOption(cause)
    if (Option.isSome(failure)) {
      const error = failure.value
      if (isApiError(error)) {
        const { body, status } = yield* encodeApiError(error)
        const response = HttpServerResponse.unsafeJson(body, { status })
        return error._tag === "service_unavailable"
          ? HttpServerResponse.setHeader(response, "retry-after", String(RETRY_AFTER_SECONDS))
          : response
      }
      if (error instanceof HttpApiError.HttpApiDecodeError) {
        const first = error.issues[0]
        if (first !== undefined && isMissingRecord(first.message)) {
          return errorResponse(baseUrl, "not_found", first.message)
        }
        return errorResponse(baseUrl, "invalid_input", describeDecodeError(error))
      }
      if (HttpServerError.isServerError(error) && error._tag === "RouteNotFound") {
        return errorResponse(baseUrl, "not_found", "No such path")
      }
      if (isRequestError(error)) {
        const { code, message } = classifyBodyFailure(error)
        return errorResponse(baseUrl, code, message)
      }
    }
    const defect = Cause.dieOption(cause)
    if (Option.isSome(defect) && isRequestError(defect.value)) {
      const { code, message } = classifyBodyFailure(defect.value)
      return errorResponse(baseUrl, code, message)
    }
    const trouble = databaseTrouble(Cause.squash(cause))
    if (trouble === "pool_exhausted") {
      return unavailableResponse(
        baseUrl,
        "The service is over capacity (no database connection came free); retry shortly"
      )
    }
    if (trouble === "unreachable") {
      return unavailableResponse(baseUrl, "The database cannot be reached right now; retry shortly")
    }
    if (Cause.isInterruptedOnly(cause)) {
      return yield* Effect.interrupt
    }
    yield* Effect.logError("Request failed", cause)
    return errorResponse(baseUrl, "internal_error", "Something went wrong on our side; it has been logged")
  })
