import { HttpApiMiddleware } from "@effect/platform"
import { RateLimited } from "../../Errors/ApiErrors.js"
import { wire } from "../../Errors/Wire.js"

/** Public data: 120 requests a minute per client address. */
export class PublicRateLimit extends HttpApiMiddleware.Tag<PublicRateLimit>()("PublicRateLimit", {
  failure: wire(RateLimited)
}) {}

/** `POST /v1/waitlist`: 10 an hour per client address. */
export class WaitlistRateLimit extends HttpApiMiddleware.Tag<WaitlistRateLimit>()("WaitlistRateLimit", {
  failure: wire(RateLimited)
}) {}
