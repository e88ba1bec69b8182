import { HttpApiMiddleware, HttpApiSecurity } from "@effect/platform"
import { Context, Schema } from "effect"
import { CurrentActor, CurrentAdmin, CurrentAgent, CurrentUser } from "../../Domain/Current.js"
import {
  EmailUnverified,
  Forbidden,
  IpNotAllowed,
  NotFound,
  RateLimited,
  Unauthenticated
} from "../../Errors/ApiErrors.js"
import { wire } from "../../Errors/Wire.js"

/**
 * The credential middlewares, one per kind of endpoint (see the specification's
 * Authentication section). Each answers the mismatch table's error for a wrong credential.
 */

/** Agent endpoints, `GET /v1/agent`, `POST /v1/call`, `/mcp`: an agent key only. */
export class AgentAuth extends HttpApiMiddleware.Tag<AgentAuth>()("AgentAuth", {
  provides: CurrentAgent,
  failure: Schema.Union(wire(Unauthenticated), wire(Forbidden), wire(IpNotAllowed), wire(RateLimited)),
  security: { agentKey: HttpApiSecurity.bearer }
}) {}

/** `/v1/orgs/{orgId}/...`: a session of a member, or an org key of that org. */
export class OrgAuth extends HttpApiMiddleware.Tag<OrgAuth>()("OrgAuth", {
  provides: CurrentActor,
  failure: Schema.Union(
    wire(Unauthenticated),
    wire(Forbidden),
    wire(NotFound),
    wire(RateLimited),
    wire(EmailUnverified)
  ),
  security: { orgCredential: HttpApiSecurity.bearer }
}) {}

/**
 * Org endpoints that org keys may not reach (`/keys...`, `POST /deletion-requests`): 403
 * `forbidden` for a working org key, 401 `unauthenticated` for an unknown or revoked one.
 */
export class SessionOnly extends HttpApiMiddleware.Tag<SessionOnly>()("SessionOnly", {
  failure: Schema.Union(wire(Unauthenticated), wire(Forbidden))
}) {}

/** Account endpoints (`/v1/me`, `POST /v1/orgs`, sign-out...): a session only. */
export class SessionAuth extends HttpApiMiddleware.Tag<SessionAuth>()("SessionAuth", {
  provides: CurrentUser,
  failure: Schema.Union(wire(Unauthenticated), wire(Forbidden), wire(EmailUnverified)),
  security: { session: HttpApiSecurity.bearer }
}) {}

/**
 * Admin endpoints: an administrator's session (`as_...` from `POST /admin/sign-in`) only.
 * Org keys answer 403 like everywhere outside their org; anything else 401.
 */
export class AdminAuth extends HttpApiMiddleware.Tag<AdminAuth>()("AdminAuth", {
  provides: CurrentAdmin,
  failure: Schema.Union(wire(Unauthenticated), wire(Forbidden)),
  security: { adminSession: HttpApiSecurity.bearer }
}) {}

/**
 * Declared on an agent endpoint whose first write checks a cached agent key again
 * (`Credentials.stillValid` in the same transaction), for the key modes listed: for those, the
 * key may come from the replica's cache (Credentials.ts). A live gateway call's hold checks it
 * (a test call writes nothing, so its key is read); a purchase's write does in either mode.
 */
export class KeyCheckedAgain
  extends Context.Tag("KeyCheckedAgain")<KeyCheckedAgain, ReadonlyArray<"test" | "live">>()
{}
