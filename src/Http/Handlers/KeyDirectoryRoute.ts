import { HttpApiBuilder, HttpServerRequest, HttpServerResponse } from "@effect/platform"
import { Effect } from "effect"
import { KEY_DIRECTORY_PATH, KeyDirectory } from "../../Services/BotAuth/KeyDirectory.js"
import { PublicUrl } from "../../Services/PublicUrl.js"
import { policies, RateLimiter } from "../../Services/RateLimiter/RateLimiter.js"
import { ClientAddress } from "../ClientAddress.js"
import { errorResponse } from "../Middleware/ErrorResponses.js"
import { rateLimitHeaders } from "../Middleware/RateLimits.js"

/**
 * `GET /.well-known/http-message-signatures-directory`: the keys that sign the service's
 * requests to providers (Web Bot Auth), with the directory's own signatures. Public, under
 * the public data rate limit like the receipts' JWKS (each answer signs once per key).
 */
export const KeyDirectoryRouteLive = HttpApiBuilder.Router.use((router) =>
  Effect.gen(function*() {
    const directory = yield* KeyDirectory
    const limiter = yield* RateLimiter
    const addresses = yield* ClientAddress
    const baseUrl = yield* PublicUrl
    const publicUrl = new URL(baseUrl)

    yield* router.get(
      KEY_DIRECTORY_PATH,
      Effect.gen(function*() {
        const decision = yield* limiter.consume(policies.publicData, yield* addresses.current)
        const limitHeaders = rateLimitHeaders(decision)
        if (!decision.allowed) {
          return HttpServerResponse.setHeaders(errorResponse(baseUrl, "rate_limited"), limitHeaders)
        }
        // The authority the verifier asked, as the draft's `@authority;req` binds it.
        const request = yield* HttpServerRequest.HttpServerRequest
        const asked = `${publicUrl.protocol}//${request.headers.host ?? publicUrl.host}${KEY_DIRECTORY_PATH}`
        const signed = yield* directory.signedFor(
          URL.canParse(asked) ? asked : `${publicUrl.origin}${KEY_DIRECTORY_PATH}`
        )
        return HttpServerResponse.text(signed.body, {
          contentType: signed.headers["content-type"],
          headers: { ...signed.headers, ...limitHeaders }
        })
      })
    )
  })
)
