import { HttpApiEndpoint, HttpApiGroup, OpenApi } from "@effect/platform"
import { Schema } from "effect"
import { EmailAddress } from "../../Domain/Email.js"
import { EndpointOpeningJson, OpeningRequestJson } from "../../Domain/EndpointOpening.js"
import { Conflict, Forbidden, LastOwner, NotFound, PlanLimit } from "../../Errors/ApiErrors.js"
import { wire } from "../../Errors/Wire.js"
import { OrgAuth, SessionOnly } from "../Security/AuthTags.js"
import { DeletionRequest, Invite, Member, Org, Revoked, Role } from "./IdentitySchemas.js"
import { InviteIdParam, OrgIdParam, OrgPath, UserIdParam } from "./PathIds.js"

/** An org, its people and its data-deletion requests: `/v1/orgs/{orgId}/...`. */
export class OrgsGroup extends HttpApiGroup.make("orgs")
  .add(
    HttpApiEndpoint.get("get", "/v1/orgs/:orgId")
      .annotateContext(
        OpenApi.annotations({ summary: "Get an org", description: "The org's name, slug, plan, balance and trial." })
      )
      .setPath(OrgPath)
      .addSuccess(Schema.Struct({ org: Org }))
  )
  .add(
    HttpApiEndpoint.get("members", "/v1/orgs/:orgId/members")
      .annotateContext(OpenApi.annotations({ summary: "List members", description: "Members with their roles." }))
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
      .annotateContext(
        OpenApi.annotations({
          summary: "Change a member's role",
          description: "Owner only. The last owner cannot step down (409 last_owner)."
        })
      )
  )
  .add(
    HttpApiEndpoint.del("removeMember", "/v1/orgs/:orgId/members/:userId")
      .setPath(Schema.Struct({ orgId: OrgIdParam, userId: UserIdParam }))
      .addSuccess(Schema.Struct({ status: Schema.Literal("removed") }))
      .addError(wire(Forbidden))
      .addError(wire(LastOwner))
      .annotateContext(
        OpenApi.annotations({
          summary: "Remove a member",
          description: "Owner only, or a member removing themselves (leaving). Org keys the person made stop working."
        })
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
      .annotateContext(
        OpenApi.annotations({
          summary: "Invite a person",
          description: "Owner only. Mails a link valid 7 days. Seats = members + pending invitations."
        })
      )
  )
  .add(
    HttpApiEndpoint.get("invites", "/v1/orgs/:orgId/invites")
      .annotateContext(
        OpenApi.annotations({ summary: "List invitations", description: "Pending invitations with their expiry." })
      )
      .setPath(OrgPath)
      .addSuccess(Schema.Struct({ invites: Schema.Array(Invite) }))
  )
  .add(
    HttpApiEndpoint.del("revokeInvite", "/v1/orgs/:orgId/invites/:inviteId")
      .annotateContext(
        OpenApi.annotations({
          summary: "Revoke an invitation",
          description: "The mailed link stops working and the seat is free again."
        })
      )
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
      .annotateContext(
        OpenApi.annotations({
          summary: "Request data deletion",
          description: "Owner, session only: asks for the org's data to be deleted."
        })
      )
  )
  .add(
    HttpApiEndpoint.get("deletionRequests", "/v1/orgs/:orgId/deletion-requests")
      .annotateContext(
        OpenApi.annotations({
          summary: "List deletion requests",
          description: "The org's data-deletion requests and their state."
        })
      )
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
      .addSuccess(Schema.Struct({ request: OpeningRequestJson }), { status: 201 })
      .addError(wire(Forbidden))
      .addError(wire(Conflict))
      .annotateContext(
        OpenApi.annotations({
          summary: "Ask for an endpoint to be opened",
          description:
            "Owner: asks for an on-request gateway endpoint to be opened for the org; administrators see it in their queue."
        })
      )
  )
  .add(
    HttpApiEndpoint.get("openings", "/v1/orgs/:orgId/endpoint-openings")
      .annotateContext(
        OpenApi.annotations({
          summary: "Endpoint openings",
          description: "The on-request endpoints open for this org, and its requests with their state."
        })
      )
      .setPath(OrgPath)
      .addSuccess(Schema.Struct({
        openings: Schema.Array(EndpointOpeningJson),
        requests: Schema.Array(OpeningRequestJson)
      }))
  )
  .addError(wire(NotFound))
  .middleware(OrgAuth)
  .annotateContext(OpenApi.annotations({
    title: "Orgs",
    description: "A member's session, or an org key of this org (read keys: GET only)."
  }))
{}
