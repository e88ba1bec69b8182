import {
  FileSystem,
  HttpApiBuilder,
  HttpIncomingMessage,
  HttpServerRequest,
  HttpServerResponse
} from "@effect/platform"
import { Effect, Layer, Option } from "effect"
import { currentDocsBaseUrl } from "../../Errors/Wire.js"
import { AppConfig } from "../../Services/AppConfig.js"
import { AuthConfig } from "../../Services/Auth/AuthConfig.js"
import { Lifecycle } from "../../Services/Lifecycle/Lifecycle.js"
import { ObservabilityConfig } from "../../Services/Observability/ObservabilityConfig.js"
import { PublicUrl } from "../../Services/PublicUrl.js"
import { Api } from "../Api.js"
import { dashboardRoutes, extraRoutes, ownBodyPrefixes } from "../ExtraRoutes.js"
import { X402Requests, x402RouteOf } from "../Handlers/X402Requests.js"
import { isOrgKeyOutsideOrgs } from "../PresentedCredential.js"
import { makeRouteTable, routesOfApi } from "../RouteTable.js"
import { agentRoutesOf, makeAgentRefusals } from "./AgentRefusals.js"
import { errorResponse, responseForCause } from "./ErrorResponses.js"
import { observeRequest } from "./Observe.js"
import {
  announcesBody,
  problemInContentType,
  problemInJsonBody,
  problemInOwnBody,
  problemInTarget
} from "./RequestChecks.js"
import { withSecurityHeaders } from "./SecurityHeaders.js"

/** Probes answer outside admission, so an overloaded or draining replica still reports itself. */
const probePaths = new Set(["/healthz", "/readyz"])

/** Largest request body accepted: 1 MB. */
export const MAX_BODY_BYTES = 1024 * 1024

/**
 * What every request starts with, set once for the server instead of on each request: the
 * body limit the platform applies while it reads a body (see below), and the base address
 * of `doc_url` in error bodies. Provided to the server, so its request fibers inherit both.
 */
export const EdgeDefaults = Layer.merge(
  Layer.succeed(HttpIncomingMessage.MaxBodySize, Option.some(FileSystem.Size(MAX_BODY_BYTES))),
  Layer.scopedDiscard(Effect.flatMap(PublicUrl, (baseUrl) => Effect.locallyScoped(currentDocsBaseUrl, baseUrl)))
)

/**
 * The outermost middleware of every request: malformed targets, unknown paths and methods,
 * org keys used outside their org's paths, the body limit, bodies that are not clean JSON
 * (or, where a route takes a form or reads its own body, not a clean form: RequestChecks.ts), admission
 * (Lifecycle.ts: over capacity or shutting down answers 503 with `Retry-After`), the counting of agent
 * routes' refusals for their owners (AgentRefusals.ts), and the shaping of every failure into the
 * common error body.
 * Every request, answered here or by a handler, gets its request id, metrics and access
 * log line (Observe.ts), and its answer the security headers (SecurityHeaders.ts: no
 * framing of HTML, HSTS in production).
 *
 * Body limit: a `Content-Length` over 1 MB is refused before the body is read; a chunked
 * body is read up to 1 MB and refused with the same 413 as soon as it goes past.
 */
export const EdgeMiddleware = HttpApiBuilder.middleware(
  Effect.gen(function*() {
    const baseUrl = yield* PublicUrl
    const lifecycle = yield* Lifecycle
    const observability = yield* ObservabilityConfig
    const { dashboardPath } = yield* AuthConfig
    const { isProduction } = yield* AppConfig
    const routes = makeRouteTable([
      ...routesOfApi(Api),
      ...extraRoutes,
      ...dashboardRoutes(dashboardPath)
    ])
    const agentRoutes = agentRoutesOf(Api)
    const countingRefusals = yield* makeAgentRefusals
    // Keyless paid requests (x402), when switched on: none otherwise, and nothing is asked.
    const paidRequests = yield* X402Requests
    return (app) =>
      Effect.gen(function*() {
        const request = yield* HttpServerRequest.HttpServerRequest
        const pathname = request.url.split("?", 1)[0] ?? "/"
        const match = routes.match(request.method, pathname)
        const checked = Effect.gen(function*() {
          const targetProblem = problemInTarget(request.url)
          if (targetProblem !== undefined) return errorResponse(baseUrl, "invalid_input", targetProblem)
          if (match._tag === "NotFound") {
            return errorResponse(baseUrl, "not_found", `No such path: ${pathname}`)
          }
          if (match._tag === "MethodNotAllowed") {
            return errorResponse(baseUrl, "method_not_allowed", `${request.method} is not supported on ${pathname}`)
              .pipe(
                HttpServerResponse.setHeader("allow", match.allow.join(", "))
              )
          }
          if (isOrgKeyOutsideOrgs(request, pathname)) {
            return errorResponse(
              baseUrl,
              "forbidden",
              "An org key works only under /v1/orgs/{orgId}/... of its own org"
            )
          }
          const declaredLength = Number(request.headers["content-length"] ?? "0")
          if (declaredLength > MAX_BODY_BYTES) {
            return errorResponse(baseUrl, "payload_too_large", "Request body is over 1 MB")
          }
          // The authorization server reads its own bodies; everything else speaks JSON.
          const ownBody = ownBodyPrefixes.some((prefix) => pathname.startsWith(prefix))
          const typeProblem = ownBody ? undefined : problemInContentType(request.method, request.headers)
          if (typeProblem !== undefined) return errorResponse(baseUrl, "invalid_input", typeProblem)
          if (announcesBody(request.headers)) {
            const text = yield* request.text
            const bodyProblem = ownBody ? problemInOwnBody(request.headers, text) : problemInJsonBody(text)
            if (bodyProblem !== undefined) return errorResponse(baseUrl, "invalid_input", bodyProblem)
          }
          if (probePaths.has(pathname)) return yield* app
          if (Option.isSome(paidRequests)) {
            const paidRoute = x402RouteOf(request.method, pathname, request.headers)
            if (paidRoute !== null) return yield* lifecycle.admit(paidRequests.value(request, paidRoute))
          }
          const agentRoute = match._tag === "Found" && agentRoutes.has(`${request.method} ${match.route}`)
          return yield* lifecycle.admit(agentRoute ? countingRefusals(app) : app)
        }).pipe(
          Effect.catchAllCause((cause) => responseForCause(baseUrl, cause)),
          Effect.flatMap((response) =>
            Effect.map(lifecycle.state, (state) =>
              // While draining, keep-alive clients are told to reconnect (to another replica).
              state.draining ? HttpServerResponse.setHeader(response, "connection", "close") : response)
          ),
          Effect.map((response) => withSecurityHeaders(response, isProduction))
        )
        // Unknown paths share one label, so a scan cannot grow the metrics without bound.
        const route = match._tag === "Found" ? match.route : "unmatched"
        return yield* observeRequest(request, route, observability.accessLog, checked)
      })
  })
)
