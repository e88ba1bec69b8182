import { HttpApiBuilder, HttpRouter, HttpServerRequest, HttpServerResponse } from "@effect/platform"
import { Data, Effect, Option, Schema } from "effect"
import type { Interaction } from "oidc-provider"
import type { SessionUser } from "../../Domain/Current.js"
import { normalizeEmail } from "../../Domain/Email.js"
import { AgentId, idOrNull, OrgId } from "../../Domain/Ids.js"
import { InvalidInput, NotFound } from "../../Errors/ApiErrors.js"
import { errorCatalogue } from "../../Errors/ErrorCatalogue.js"
import { isApiError } from "../../Errors/Wire.js"
import { Agents } from "../../Services/Agents/Agents.js"
import { Accounts } from "../../Services/Auth/Accounts.js"
import { AuthConfig } from "../../Services/Auth/AuthConfig.js"
import { Credentials } from "../../Services/Auth/Credentials.js"
import { EmailSignIn } from "../../Services/Auth/EmailSignIn.js"
import { requireOwner } from "../../Services/Auth/Roles.js"
import { AuthorizationServer, MCP_SCOPE, OAUTH_PREFIX } from "../../Services/OAuth/AuthorizationServer.js"
import { Connections } from "../../Services/OAuth/Connections.js"
import { PublicUrl } from "../../Services/PublicUrl.js"
import { policies, RateLimiter } from "../../Services/RateLimiter/RateLimiter.js"
import { sha256Hex } from "../../Services/SecretBox/Hashes.js"
import { ClientAddress } from "../ClientAddress.js"
import { withSessionCookie } from "../Handlers/IdentityHttp.js"
import { dashboardLook } from "../Handlers/ServicePage.js"
import { enforceRateLimit } from "../Middleware/RateLimits.js"
import { makeOwnOrigin } from "../Middleware/RequestSite.js"
import { SESSION_COOKIE } from "../Security/Cookies.js"
import { consentPages, type OrgChoice } from "./ConsentPage.js"
import { providerRequest } from "./OAuthRoutes.js"

/** A page that answers the request at once (the interaction is gone, a form from another site). */
class Answered extends Data.TaggedError("Answered")<{ readonly response: HttpServerResponse.HttpServerResponse }> {}

/** A whole number of credits from a form field. */
const creditsField = (value: string | undefined, what: string) => {
  const text = (value ?? "").trim()
  return /^\d{1,15}$/.test(text)
    ? Effect.succeed(BigInt(text))
    : Effect.fail(new InvalidInput({ message: `The ${what} must be a whole number of credits` }))
}

const INTERACTION_PATH = `${OAUTH_PREFIX}/interaction/:uid`

/** Where the mailed sign-in link of an interaction opens (`verifyLink`). */
const signInLinkPath = (uid: string) => `${OAUTH_PREFIX}/interaction/${encodeURIComponent(uid)}/verify` as const

const knownScopes = new Set([MCP_SCOPE, "offline_access"])

/**
 * The authorization server's interaction (its `interactions.url`): the owner signs in with a
 * mailed link (the dashboard's session cookie), whose page (`/verify`) spends it and comes
 * back to the interaction, so the flow goes on in the tab that opened the mail; then the
 * owner chooses the org and the agent the
 * client may act as, or makes a new agent with its budget and approval threshold. The
 * choice becomes a grant for `/mcp` (scope `mcp`) and a connection naming the agent
 * (Connections.ts). Only an owner of the org may connect its agents; an org or agent of
 * another org is not found, whatever ids the form carries.
 *
 * CSRF: the forms post to the same origin only (the `Origin` header must be ours), and the
 * interaction's own cookie (SameSite=Lax, signed) binds the post to the browser that began it.
 */
export const ConsentRoutesLive = HttpApiBuilder.Router.use((router) =>
  Effect.gen(function*() {
    const server = yield* AuthorizationServer
    const connections = yield* Connections
    const credentials = yield* Credentials
    const accounts = yield* Accounts
    const agents = yield* Agents
    const emailSignIn = yield* EmailSignIn
    const limiter = yield* RateLimiter
    const addresses = yield* ClientAddress
    const baseUrl = yield* PublicUrl
    const { secureCookies } = yield* AuthConfig
    const { consentPage, mailSentPage, otherBrowserPage, page, signInPage } = consentPages(yield* dashboardLook)
    const gone = new Answered({
      response: page(
        "This request has expired",
        "<p>Start connecting again from your MCP client: the sign-in request it opened is no longer valid.</p>",
        400
      )
    })
    const crossSite = new Answered({
      response: page("Refused", "<p>This form must be sent from this site.</p>", 403)
    })
    // The service's own origin exactly (no development loopback allowance, no header fallback).
    const isOwnOrigin = makeOwnOrigin(baseUrl, false)

    const interactionOf = (request: HttpServerRequest.HttpServerRequest) =>
      Effect.gen(function*() {
        const route = yield* HttpRouter.RouteContext
        const { req, res } = providerRequest(request, baseUrl)
        const details: Interaction = yield* Effect.tryPromise({
          try: () => server.provider.interactionDetails(req, res),
          catch: () => gone
        })
        if (details.uid !== route.params["uid"]) return yield* gone
        const clientId = String(details.params["client_id"])
        const client = yield* Effect.promise(() => server.provider.Client.find(clientId))
        const clientName = client?.clientName ?? clientId
        // A client named by its metadata document's URL: the owner sees whose site vouches for the name.
        const site = client?.clientIdMetadataDocument === true ? new URL(clientId).host : undefined
        return { details, clientId, clientName, shown: { name: clientName, site } }
      })

    const signedIn = (request: HttpServerRequest.HttpServerRequest) =>
      Effect.gen(function*() {
        const token = request.cookies[SESSION_COOKIE]
        if (token === undefined) return Option.none<{ user: SessionUser; token: string }>()
        return yield* credentials.authenticateSession(token).pipe(
          Effect.map((user) => Option.some({ user, token })),
          Effect.catchTags({
            unauthenticated: () => Effect.succeed(Option.none()),
            email_unverified: () => Effect.succeed(Option.none())
          })
        )
      })

    /** The orgs the person owns, each with its agents. */
    const ownedOrgs = (user: SessionUser, token: string) =>
      Effect.gen(function*() {
        const { orgs: memberships } = yield* accounts.me(user.user_id)
        return yield* Effect.forEach(
          memberships.filter((membership) => membership.role === "owner"),
          (membership) =>
            Effect.gen(function*() {
              const actor = yield* credentials.sessionActor(token, membership.id)
              // The newest 200: more than the active agents any plan allows.
              const listed = yield* agents.list(actor, 200, undefined)
              return { id: membership.id, name: membership.name, agents: listed.agents } satisfies OrgChoice
            })
        )
      })

    const sameOrigin = Effect.gen(function*() {
      const request = yield* HttpServerRequest.HttpServerRequest
      const origin = request.headers["origin"]
      if (origin === undefined || !isOwnOrigin(origin)) return yield* crossSite
    })

    const show = Effect.gen(function*() {
      const request = yield* HttpServerRequest.HttpServerRequest
      const { details, shown } = yield* interactionOf(request)
      const session = yield* signedIn(request)
      if (Option.isNone(session)) return signInPage(details.uid, shown)
      const { token, user } = session.value
      return consentPage(details.uid, shown, user.email, yield* ownedOrgs(user, token))
    })

    const startSignIn = Effect.gen(function*() {
      yield* sameOrigin
      const request = yield* HttpServerRequest.HttpServerRequest
      const { details, shown } = yield* interactionOf(request)
      const form = yield* request.urlParamsBody
      const email = normalizeEmail(form.find(([key]) => key === "email")?.[1] ?? "")
      if (!/^[^\s@]+@[^\s@]+\.[^\s@]+$/.test(email)) {
        return signInPage(details.uid, shown, "Enter an email address")
      }
      // The same limits as POST /auth/email/start.
      const ip = yield* addresses.current
      yield* enforceRateLimit(limiter, policies.emailStart, ip)
      const perAddress = yield* limiter.consume(policies.emailPerAddress, sha256Hex(email))
      if (!perAddress.allowed) {
        return signInPage(details.uid, shown, "Too many sign-in mails to this address: try again later")
      }
      yield* emailSignIn.start(email, ip, baseUrl, { verifyPath: signInLinkPath(details.uid) })
      return mailSentPage(details.uid, email)
    })

    /**
     * The mailed link: spends it (a session, as GET /auth/email/verify does) and goes back to
     * the interaction's page, now signed in. Opened in a browser without the interaction (its
     * cookie binds it to the one that began it), the link is left unspent, to open where it belongs.
     */
    const verifyLink = Effect.gen(function*() {
      const request = yield* HttpServerRequest.HttpServerRequest
      const { details, shown } = yield* interactionOf(request).pipe(
        Effect.catchIf(
          (error): error is Answered => error instanceof Answered,
          () => new Answered({ response: otherBrowserPage() })
        )
      )
      const token = new URL(request.url, baseUrl).searchParams.get("token") ?? ""
      const origin = { ip: yield* addresses.current, userAgent: request.headers["user-agent"] }
      return yield* emailSignIn.verify(token, origin).pipe(
        Effect.map((session) =>
          withSessionCookie(
            HttpServerResponse.redirect(`${baseUrl}${OAUTH_PREFIX}/interaction/${details.uid}`, { status: 303 }),
            session.sessionToken,
            secureCookies
          )
        ),
        Effect.catchTag("invalid_token", (error) => Effect.succeed(signInPage(details.uid, shown, error.message)))
      )
    })

    const decide = Effect.gen(function*() {
      yield* sameOrigin
      const request = yield* HttpServerRequest.HttpServerRequest
      const { clientId, clientName, details, shown } = yield* interactionOf(request)
      const session = yield* signedIn(request)
      if (Option.isNone(session)) return signInPage(details.uid, shown)
      const { token, user } = session.value
      const form = new Map(yield* request.urlParamsBody)
      const finish = (result: Parameters<typeof server.provider.interactionResult>[2]) =>
        Effect.map(
          Effect.promise(() => {
            const { req, res } = providerRequest(request, baseUrl)
            return server.provider.interactionResult(req, res, result, { mergeWithLastSubmission: false })
          }),
          (returnTo) => HttpServerResponse.redirect(returnTo, { status: 303 })
        )
      if (form.get("decision") !== "allow") {
        return yield* finish({ error: "access_denied", error_description: "The owner did not allow the connection" })
      }

      const connected = Effect.gen(function*() {
        const [orgId = "", agentChoice = ""] = (form.get("choice") ?? "").split(":")
        // Another org's ids find nothing: the person must belong to the org, and own it.
        const actor = yield* credentials.sessionActor(token, idOrNull(OrgId, orgId))
        yield* requireOwner(actor)
        const agent = agentChoice === "new"
          ? (yield* agents.create(actor, {
            name: (form.get("name") ?? "").trim() || clientName.slice(0, 80),
            mode: form.get("mode") === "live" ? "live" : "test",
            monthlyBudgetCredits: yield* creditsField(form.get("monthly_budget"), "monthly budget"),
            approvalThresholdCredits: (form.get("approval_threshold") ?? "").trim() === ""
              ? null
              : yield* creditsField(form.get("approval_threshold"), "approval threshold")
          })).agent
          : yield* agents.get(
            actor,
            yield* Schema.decodeUnknown(AgentId)(agentChoice).pipe(
              Effect.mapError(() => new NotFound({ message: "No such agent in this org" }))
            )
          )
        const grant = new server.provider.Grant({ accountId: user.user_id, clientId })
        grant.addResourceScope(server.resource, MCP_SCOPE)
        // The scopes it asked for among the server's own (`mcp`, `offline_access`); others were refused already.
        const requested = String(details.params["scope"] ?? "").split(" ").filter((scope) => knownScopes.has(scope))
        if (requested.length > 0) grant.addOIDCScope(requested.join(" "))
        const grantId = yield* Effect.promise(() => grant.save())
        yield* connections.connect({ grantId, clientId, clientName, actor, agentId: agent.id })
        return grantId
      })

      return yield* connected.pipe(
        Effect.flatMap((grantId) => finish({ login: { accountId: user.user_id }, consent: { grantId } })),
        Effect.catchIf(isApiError, (error) =>
          Effect.map(
            ownedOrgs(user, token),
            (orgs) =>
              consentPage(details.uid, shown, user.email, orgs, error.message).pipe(
                HttpServerResponse.setStatus(errorCatalogue[error._tag].status)
              )
          ))
      )
    })

    const answered = <E, R>(effect: Effect.Effect<HttpServerResponse.HttpServerResponse, E, R>) =>
      Effect.catchIf(
        effect,
        (error): error is Extract<E, Answered> => error instanceof Answered,
        (answer) => Effect.succeed(answer.response)
      )

    yield* router.get(INTERACTION_PATH, answered(show))
    yield* router.post(INTERACTION_PATH, answered(decide))
    yield* router.post(`${INTERACTION_PATH}/sign-in`, answered(startSignIn))
    yield* router.get(`${INTERACTION_PATH}/verify`, answered(verifyLink))
  })
)
