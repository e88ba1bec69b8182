import { HttpApiEndpoint, HttpApiGroup, OpenApi } from "@effect/platform"
import { Schema } from "effect"
import { AdminJson } from "../../Domain/Admin.js"
import { EmailAddress } from "../../Domain/Email.js"
import { InvalidCredentials, Locked, RateLimited, WeakPassword } from "../../Errors/ApiErrors.js"
import { wire } from "../../Errors/Wire.js"
import { AdminAuth } from "../Security/AuthTags.js"
import { Timestamp } from "./IdentitySchemas.js"

/** Administrative sign-in: email, password and a TOTP code. */
export class AdminSignInGroup extends HttpApiGroup.make("adminSignIn")
  .add(
    HttpApiEndpoint.post("signIn", "/admin/sign-in")
      .setPayload(Schema.Struct({
        email: EmailAddress,
        password: Schema.String.pipe(Schema.maxLength(1024)),
        code: Schema.String.pipe(Schema.maxLength(16))
      }))
      .addSuccess(Schema.Struct({
        session_token: Schema.String.annotations({ description: "Administrator session (as_...), 12 hours" }),
        admin: AdminJson,
        expires_at: Timestamp
      }))
      .addError(wire(InvalidCredentials))
      .addError(wire(Locked))
      .addError(wire(WeakPassword))
      .addError(wire(RateLimited))
      .annotateContext(
        OpenApi.annotations({
          summary: "Administrator sign-in",
          description: "Five failures lock the account for 15 minutes (401 invalid_credentials, then 429 locked)."
        })
      )
  )
  .annotateContext(
    OpenApi.annotations({
      title: "Administrative sign-in",
      description: "Administrators sign in with email and password."
    })
  )
{}

/** Endpoints every administrator session reaches; later admin groups use the same middleware. */
export class AdminSessionGroup extends HttpApiGroup.make("adminSession")
  .add(
    HttpApiEndpoint.get("me", "/admin/me")
      .annotateContext(
        OpenApi.annotations({
          summary: "Current administrator",
          description: "The administrator the session belongs to."
        })
      ).addSuccess(Schema.Struct({ admin: AdminJson }))
  )
  .add(
    HttpApiEndpoint.post("signOut", "/admin/sign-out")
      .annotateContext(
        OpenApi.annotations({ summary: "Administrator sign-out", description: "Ends the administrator session." })
      ).addSuccess(
        Schema.Struct({ status: Schema.Literal("signed_out") })
      )
  )
  .middleware(AdminAuth)
  .annotateContext(
    OpenApi.annotations({ title: "Administrator session", description: "An administrator session (as_...)." })
  )
{}
