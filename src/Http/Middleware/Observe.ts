import { type HttpServerRequest, HttpServerResponse } from "@effect/platform"
import { Clock, Context, Effect, Option, Tracer } from "effect"
import { randomUUID } from "node:crypto"
import { recordRequest } from "../../Services/Observability/HttpMetrics.js"
import { presentedCredential } from "../PresentedCredential.js"

/** The header that carries the request id on every answer. */
export const REQUEST_ID_HEADER = "request-id"

/** Which kind of credential a request carried, for logs (never the credential itself). */
export const credentialKind = (request: HttpServerRequest.HttpServerRequest): string => {
  const presented = presentedCredential(request)
  if (presented.header !== undefined) return presented.header.kind
  return presented.cookieSession !== undefined ? "session_cookie" : "none"
}

/**
 * Wraps one request's handling: a request id in the `Request-Id` header and on every log
 * line written while it runs, the request metrics, the `http.route` of the request's span,
 * and, when ACCESS_LOG is on, one access-log line (method, route template, status,
 * duration, credential kind).
 */
export const observeRequest = <R>(
  request: HttpServerRequest.HttpServerRequest,
  route: string,
  accessLog: boolean,
  handled: Effect.Effect<HttpServerResponse.HttpServerResponse, never, R>
) =>
  Effect.gen(function*() {
    const requestId = `req_${randomUUID().replace(/-/g, "")}`
    const startedNanos = yield* Clock.currentTimeNanos
    // Read the span from the context rather than with `annotateCurrentSpan`: with tracing
    // off there is none, and that helper then builds an exception (a stack trace) per request.
    const span = Context.getOption(yield* Effect.context<never>(), Tracer.ParentSpan)
    if (Option.isSome(span) && span.value._tag === "Span") {
      span.value.attribute("http.route", route)
      span.value.attribute("request.id", requestId)
    }
    const response = yield* Effect.annotateLogs(handled, "request_id", requestId)
    const seconds = Number((yield* Clock.currentTimeNanos) - startedNanos) / 1e9
    yield* recordRequest(request.method, route, response.status, seconds)
    if (accessLog) {
      yield* Effect.logInfo("request").pipe(
        Effect.annotateLogs({
          request_id: requestId,
          method: request.method,
          route,
          status: response.status,
          duration_ms: Math.round(seconds * 1e6) / 1e3,
          credential: credentialKind(request)
        })
      )
    }
    return HttpServerResponse.setHeader(response, REQUEST_ID_HEADER, requestId)
  })
