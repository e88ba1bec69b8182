import { HttpApiEndpoint, HttpApiGroup, OpenApi } from "@effect/platform"
import { Schema } from "effect"
import { InvalidCode, NotConfigured, PhoneInUse, PhoneUnverified, RateLimited } from "../../Errors/ApiErrors.js"
import { wire } from "../../Errors/Wire.js"
import { SessionAuth } from "../Security/AuthTags.js"
import { DeletionRequest, Me, Org, Timestamp, User } from "./IdentitySchemas.js"

/** The signed-in person's own account (a session only). */
export const PhoneNumber = Schema.Trim.pipe(
  Schema.pattern(/^\+[1-9]\d{6,14}$/, {
    message: () => "Expected a phone number in E.164 form, for example +14155550123"
  })
).annotations({ identifier: "PhoneNumber", description: "E.164 phone number" })

export const OrgName = Schema.Trim.pipe(
  Schema.minLength(1, { message: () => "An org needs a name" }),
  Schema.maxLength(100, { message: () => "An org name has at most 100 characters" })
)

export class AccountGroup extends HttpApiGroup.make("account")
  .add(
    HttpApiEndpoint.get("me", "/v1/me")
      .annotateContext(
        OpenApi.annotations({ summary: "Current user", description: "The signed-in person with their orgs and roles." })
      ).addSuccess(Me)
  )
  .add(
    HttpApiEndpoint.post("startPhone", "/v1/me/phone")
      .setPayload(Schema.Struct({ phone: PhoneNumber }))
      .addSuccess(Schema.Struct({ status: Schema.Literal("sent"), expires_at: Timestamp }), { status: 202 })
      .addError(wire(PhoneInUse))
      .addError(wire(RateLimited))
      .addError(wire(NotConfigured))
      .annotateContext(
        OpenApi.annotations({
          summary: "Verify a phone: send a code",
          description: "Texts a 6-digit code, valid 10 minutes (5 codes an hour per account)."
        })
      )
  )
  .add(
    HttpApiEndpoint.post("verifyPhone", "/v1/me/phone/verify")
      .annotateContext(
        OpenApi.annotations({
          summary: "Verify a phone: check the code",
          description: "Checks the texted code; a phone verifies one account only."
        })
      )
      .setPayload(Schema.Struct({ code: Schema.String }))
      .addSuccess(Schema.Struct({ user: User }))
      .addError(wire(InvalidCode))
      .addError(wire(PhoneInUse))
  )
  .add(
    HttpApiEndpoint.post("createOrg", "/v1/orgs")
      .setPayload(Schema.Struct({ name: OrgName }))
      .addSuccess(Schema.Struct({ org: Org }), { status: 201 })
      .addError(wire(PhoneUnverified))
      .annotateContext(
        OpenApi.annotations({
          summary: "Create an org",
          description: "Creates an org with the caller as owner; needs a verified phone."
        })
      )
  )
  .add(
    HttpApiEndpoint.get("myDeletionRequests", "/v1/me/deletion-requests")
      .addSuccess(Schema.Struct({ deletion_requests: Schema.Array(DeletionRequest) }))
      .annotateContext(
        OpenApi.annotations({
          summary: "Your data-deletion requests",
          description:
            "The data-deletion requests you filed, in any org, with their status and, once carried out, a summary of what was removed."
        })
      )
  )
  .middleware(SessionAuth)
  .annotateContext(OpenApi.annotations({ title: "Account", description: "A session (ss_ token or cookie)." }))
{}
