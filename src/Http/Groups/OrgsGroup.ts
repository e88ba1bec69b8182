import { HttpApiEndpoint, HttpApiGroup, OpenApi } from "@effect/platform"
import { Schema } from "effect"
import { EmailAddress } from "../../Domain/Email.js"
import { OpeningRequest } from "../../Domain/Operations.js"
import { Conflict, Forbidden, LastOwner, NotFound, PlanLimit } from "../../Errors/ApiErrors.js"
import { wire } from "../../Errors/Wire.js"
import { OrgAuth, SessionOnly } from "../Security/AuthTags.js"
import { DeletionRequest, Invite, Member, Org, Revoked, Role } from "./IdentitySchemas.js"
import { InviteIdParam, OrgIdParam, OrgPath, UserIdParam } from "./PathIds.js"

/** An org, its people and its data-deletion requests: `/v1/orgs/{orgId}/...`. */
export class OrgsGroup extends HttpApiGroup.make("orgs")
  .add(
    HttpApiEndpoint.get("get", "/v1/orgs/:orgId")
      .setPath(OrgPath)
      .addSuccess(Schema.Struct({ org: Org }))
  )
  .add(
    HttpApiEndpoint.get("members", "/v1/orgs/:orgId/members")
      .setPath(OrgPath)
      .addSuccess(Schema.Struct({ members: Schema.Array(Member) }))
  )
  .add(
    HttpApiEndpoint.patch("changeRole", "/v1/orgs/:orgId/members/:userId")
      .setPath(Schema.Struct({ orgId: OrgIdParam, userId: UserIdParam }))
      .setPayload(Schema.Struct({ role: Role }))
      .addSuccess(Schema.Struct({ member: Member }))
      .addError(wire(Forbidden))
      .addError(wire(LastOwner))
      .annotate(OpenApi.Description, "Owner only. The last owner cannot step down (409 last_owner).")
  )
  .add(
    HttpApiEndpoint.del("removeMember", "/v1/orgs/:orgId/members/:userId")
      .setPath(Schema.Struct({ orgId: OrgIdParam, userId: UserIdParam }))
      .addSuccess(Schema.Struct({ status: Schema.Literal("removed") }))
      .addError(wire(Forbidden))
      .addError(wire(LastOwner))
      .annotate(
        OpenApi.Description,
        "Owner only, or a member removing themselves (leaving). Org keys the person made stop working."
      )
  )
  .add(
    HttpApiEndpoint.post("invite", "/v1/orgs/:orgId/invites")
      .setPath(OrgPath)
      .setPayload(
        Schema.Struct({ email: EmailAddress, role: Schema.optionalWith(Role, { default: () => "member" as const }) })
      )
      .addSuccess(Schema.Struct({ invite: Invite }), { status: 201 })
      .addError(wire(Forbidden))
      .addError(wire(PlanLimit))
      .addError(wire(Conflict))
      .annotate(OpenApi.Description, "Owner only. Mails a link valid 7 days. Seats = members + pending invitations.")
  )
  .add(
    HttpApiEndpoint.get("invites", "/v1/orgs/:orgId/invites")
      .setPath(OrgPath)
      .addSuccess(Schema.Struct({ invites: Schema.Array(Invite) }))
  )
  .add(
    HttpApiEndpoint.del("revokeInvite", "/v1/orgs/:orgId/invites/:inviteId")
      .setPath(Schema.Struct({ orgId: OrgIdParam, inviteId: InviteIdParam }))
      .addSuccess(Revoked)
      .addError(wire(Forbidden))
  )
  .add(
    HttpApiEndpoint.post("requestDeletion", "/v1/orgs/:orgId/deletion-requests")
      .setPath(OrgPath)
      .setPayload(Schema.Struct({
        reason: Schema.optional(Schema.NullOr(Schema.String.pipe(Schema.maxLength(2000))))
      }))
      .addSuccess(Schema.Struct({ deletion_request: DeletionRequest }), { status: 201 })
      .addError(wire(Forbidden))
      .middleware(SessionOnly)
      .annotate(OpenApi.Description, "Owner, session only: asks for the org's data to be deleted.")
  )
  .add(
    HttpApiEndpoint.get("deletionRequests", "/v1/orgs/:orgId/deletion-requests")
      .setPath(OrgPath)
      .addSuccess(Schema.Struct({ deletion_requests: Schema.Array(DeletionRequest) }))
  )
  .add(
    HttpApiEndpoint.post("requestOpening", "/v1/orgs/:orgId/endpoint-requests")
      .setPath(OrgPath)
      .setPayload(Schema.Struct({
        endpoint: Schema.String.pipe(Schema.maxLength(200)),
        note: Schema.optional(Schema.NullOr(Schema.String.pipe(Schema.maxLength(2000))))
      }))
      .addSuccess(Schema.Struct({ request: OpeningRequest }), { status: 201 })
      .addError(wire(Forbidden))
      .addError(wire(Conflict))
      .annotate(
        OpenApi.Description,
        "Owner: asks for an on-request gateway endpoint to be opened for the org; administrators see it in their queue."
      )
  )
  .add(
    HttpApiEndpoint.get("openings", "/v1/orgs/:orgId/endpoint-openings")
      .setPath(OrgPath)
      .addSuccess(Schema.Struct({
        openings: Schema.Array(Schema.Struct({ endpoint_id: Schema.String, opened_at: Schema.String })),
        requests: Schema.Array(OpeningRequest)
      }))
  )
  .addError(wire(NotFound))
  .middleware(OrgAuth)
  .annotateContext(OpenApi.annotations({
    title: "Orgs",
    description: "A member's session, or an org key of this org (read keys: GET only)."
  }))
{}
