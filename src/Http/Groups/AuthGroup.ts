import { HttpApiEndpoint, HttpApiGroup, HttpApiSchema, OpenApi } from "@effect/platform"
import { Schema } from "effect"
import { EmailAddress } from "../../Domain/Email.js"
import {
  Forbidden,
  IdpFailed,
  InvalidState,
  InvalidToken,
  NotConfigured,
  PlanLimit,
  RateLimited,
  UnverifiedEmail
} from "../../Errors/ApiErrors.js"
import { wire } from "../../Errors/Wire.js"
import { SessionAuth } from "../Security/AuthTags.js"
import { Org } from "./IdentitySchemas.js"

/** Sign-in: email links and the identity provider. No credential. */
export const SessionCreated = Schema.Struct({
  session_token: Schema.String.annotations({ description: "Session token (ss_...), shown once" }),
  user_id: Schema.String,
  new_user: Schema.Boolean
}).annotations({ identifier: "SessionCreated" })

export const SignInToken = Schema.Struct({ token: Schema.String })

/** A page of the dashboard to land on after signing in: a path below DASHBOARD_PATH, never another site. */
export const DASHBOARD_RETURN_PATH = /^\/(?![/\\])[\x21-\x7e]{0,2000}$/
export const ReturnPath = Schema.String.pipe(
  Schema.pattern(DASHBOARD_RETURN_PATH, {
    message: () => "next must be a path of the dashboard, such as /invites/accept?token=..."
  })
).annotations({ description: "A dashboard page to land on after signing in, relative to DASHBOARD_PATH" })

export const SignInOptions = Schema.Struct({
  email: Schema.Literal(true).annotations({ description: "Email links always work" }),
  identity_provider: Schema.Boolean.annotations({
    description: "Whether GET /auth/idp/start leads to a configured identity provider"
  })
}).annotations({ identifier: "SignInOptions" })

export const SessionState = Schema.Struct({
  signed_in: Schema.Boolean.annotations({
    description: "Whether the request carries a live session (cookie or ss_ token)"
  })
}).annotations({ identifier: "SessionState" })

export class AuthGroup extends HttpApiGroup.make("auth")
  .add(
    HttpApiEndpoint.get("options", "/auth/options")
      .addSuccess(SignInOptions)
      .annotateContext(
        OpenApi.annotations({
          summary: "Ways to sign in",
          description: "Which ways of signing in this deployment offers (the dashboard shows those)."
        })
      )
  )
  .add(
    HttpApiEndpoint.get("session", "/auth/session")
      .addSuccess(SessionState)
      .annotateContext(
        OpenApi.annotations({
          summary: "Am I signed in?",
          description:
            "Whether this browser is signed in, answered without a 401, so a page can choose between sign-in and the app."
        })
      )
  )
  .add(
    HttpApiEndpoint.post("emailStart", "/auth/email/start")
      .setPayload(Schema.Struct({ email: EmailAddress, next: Schema.optional(ReturnPath) }))
      .addSuccess(Schema.Struct({ status: Schema.Literal("sent") }), { status: 202 })
      .addError(wire(RateLimited))
      .annotateContext(
        OpenApi.annotations({
          summary: "Start email sign-in",
          description:
            "Mails a one-time sign-in link (15 minutes). 20 an hour per address, 5 mails an hour to one email."
        })
      )
  )
  .add(
    HttpApiEndpoint.get("emailVerifyLink", "/auth/email/verify")
      .setUrlParams(Schema.Struct({ token: Schema.optional(Schema.String), next: Schema.optional(Schema.String) }))
      .addSuccess(HttpApiSchema.Empty(302))
      .addError(wire(InvalidToken))
      .annotateContext(
        OpenApi.annotations({
          summary: "Open a sign-in link",
          description:
            "The emailed link: sets the service_session cookie and redirects to the dashboard (to the page `next` names, when the sign-in was started with one)."
        })
      )
  )
  .add(
    HttpApiEndpoint.post("emailVerify", "/auth/email/verify")
      .setPayload(SignInToken)
      .addSuccess(SessionCreated)
      .addError(wire(InvalidToken))
      .annotateContext(
        OpenApi.annotations({
          summary: "Spend a sign-in token",
          description: "Spends a sign-in link token and answers a session token (for scripts)."
        })
      )
  )
  .add(
    HttpApiEndpoint.get("idpStart", "/auth/idp/start")
      .addSuccess(HttpApiSchema.Empty(302))
      .addError(wire(NotConfigured))
      .addError(wire(IdpFailed))
      .annotateContext(
        OpenApi.annotations({
          summary: "Start identity-provider sign-in",
          description: "Browser only: redirects to the identity provider (finish within 10 minutes)."
        })
      )
  )
  .add(
    HttpApiEndpoint.get("idpCallback", "/auth/idp/callback")
      .setUrlParams(Schema.Struct({
        code: Schema.optional(Schema.String),
        state: Schema.optional(Schema.String),
        error: Schema.optional(Schema.String)
      }))
      .addSuccess(HttpApiSchema.Empty(302))
      .addError(wire(InvalidState))
      .addError(wire(IdpFailed))
      .addError(wire(UnverifiedEmail))
      .addError(wire(NotConfigured))
      .annotateContext(
        OpenApi.annotations({
          summary: "Finish identity-provider sign-in",
          description: "Browser only: sets the service_session cookie and redirects to the dashboard."
        })
      )
  )
  .annotateContext(OpenApi.annotations({ title: "Sign-in", description: "No credential needed." }))
{}

/** Sign-in endpoints that need a session: sign-out and accepting an invitation. */
export class AuthSessionGroup extends HttpApiGroup.make("authSession")
  .add(
    HttpApiEndpoint.post("logout", "/auth/logout")
      .annotateContext(
        OpenApi.annotations({ summary: "Sign out", description: "Ends the current session and clears its cookie." })
      )
      .addSuccess(Schema.Struct({ status: Schema.Literal("signed_out") }))
  )
  .add(
    HttpApiEndpoint.post("acceptInvite", "/auth/invites/accept")
      .annotateContext(
        OpenApi.annotations({
          summary: "Accept an invitation",
          description: "Joins the org of an invitation mailed to the signed-in address."
        })
      )
      .setPayload(SignInToken)
      .addSuccess(Schema.Struct({ org: Org }))
      .addError(wire(InvalidToken))
      .addError(wire(Forbidden))
      .addError(wire(PlanLimit))
  )
  .middleware(SessionAuth)
  .annotateContext(OpenApi.annotations({ title: "Session", description: "A session (ss_ token or cookie)." }))
{}
