import { HttpApiEndpoint, HttpApiGroup, OpenApi } from "@effect/platform"
import { Schema } from "effect"
import { Forbidden, NotFound, PlanLimit } from "../../Errors/ApiErrors.js"
import { wire } from "../../Errors/Wire.js"
import { OrgAuth, SessionOnly } from "../Security/AuthTags.js"
import { OrgKey, Revoked } from "./IdentitySchemas.js"
import { OrgIdParam, OrgKeyIdParam, OrgPath } from "./PathIds.js"

/** Org keys: a signed-in owner makes and revokes them; members list them. Session only. */
export class OrgKeysGroup extends HttpApiGroup.make("orgKeys")
  .add(
    HttpApiEndpoint.post("create", "/v1/orgs/:orgId/keys")
      .annotateContext(
        OpenApi.annotations({
          summary: "Create an org key",
          description: "A key for scripts acting on the org, with a read or write scope; shown once."
        })
      )
      .setPath(OrgPath)
      .setPayload(Schema.Struct({
        name: Schema.Trim.pipe(
          Schema.minLength(1, { message: () => "An org key needs a name" }),
          Schema.maxLength(100, { message: () => "An org key name has at most 100 characters" })
        ),
        scope: Schema.Literal("read", "write")
      }))
      .addSuccess(
        Schema.Struct({
          key: OrgKey,
          secret: Schema.String.annotations({ description: "The ok_ secret, shown only here" }),
          note: Schema.String
        }),
        { status: 201 }
      )
      .addError(wire(Forbidden))
      .addError(wire(PlanLimit))
  )
  .add(
    HttpApiEndpoint.get("list", "/v1/orgs/:orgId/keys")
      .annotateContext(
        OpenApi.annotations({
          summary: "List org keys",
          description: "The org's keys with scope, maker and last use (never the secret)."
        })
      )
      .setPath(OrgPath)
      .addSuccess(Schema.Struct({ keys: Schema.Array(OrgKey) }))
  )
  .add(
    HttpApiEndpoint.del("revoke", "/v1/orgs/:orgId/keys/:keyId")
      .annotateContext(
        OpenApi.annotations({ summary: "Revoke an org key", description: "The key stops working at once." })
      )
      .setPath(Schema.Struct({ orgId: OrgIdParam, keyId: OrgKeyIdParam }))
      .addSuccess(Revoked)
      .addError(wire(Forbidden))
  )
  .addError(wire(NotFound))
  .middlewareEndpoints(SessionOnly)
  .middleware(OrgAuth)
  .annotateContext(OpenApi.annotations({
    title: "Org keys",
    description: "A member's session only (org keys are refused); making and revoking needs an owner."
  }))
{}
