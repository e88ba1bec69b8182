import { HttpApiBuilder } from "@effect/platform"
import { Effect } from "effect"
import { CurrentActor } from "../../Domain/Current.js"
import { EndpointOpenings } from "../../Services/Gateway/EndpointOpenings.js"
import { Orgs } from "../../Services/Orgs/Orgs.js"
import { PublicUrl } from "../../Services/PublicUrl.js"
import { Api } from "../Api.js"

export const OrgsHandlers = HttpApiBuilder.group(Api, "orgs", (handlers) =>
  Effect.gen(function*() {
    const orgs = yield* Orgs
    const openings = yield* EndpointOpenings
    const baseUrl = yield* PublicUrl
    return handlers
      .handle("get", () => Effect.map(Effect.flatMap(CurrentActor, orgs.get), (org) => ({ org })))
      .handle("members", () => Effect.map(Effect.flatMap(CurrentActor, orgs.members), (members) => ({ members })))
      .handle("changeRole", ({ path, payload }) =>
        Effect.gen(function*() {
          const actor = yield* CurrentActor
          return { member: yield* orgs.changeRole(actor, path.userId, payload.role) }
        }))
      .handle("removeMember", ({ path }) =>
        Effect.flatMap(CurrentActor, (actor) => orgs.removeMember(actor, path.userId)))
      .handle("invite", ({ payload }) =>
        Effect.gen(function*() {
          const actor = yield* CurrentActor
          return { invite: yield* orgs.invite(actor, payload.email, payload.role, baseUrl) }
        }))
      .handle("invites", () =>
        Effect.map(Effect.flatMap(CurrentActor, orgs.invites), (invites) => ({ invites })))
      .handle("revokeInvite", ({ path }) =>
        Effect.flatMap(CurrentActor, (actor) =>
          orgs.revokeInvite(actor, path.inviteId)))
      .handle("requestDeletion", ({ payload }) =>
        Effect.gen(function*() {
          const actor = yield* CurrentActor
          const reason = payload.reason === undefined || payload.reason === null || payload.reason.trim() === ""
            ? null
            : payload.reason.trim()
          return { deletion_request: yield* orgs.requestDeletion(actor, reason) }
        }))
      .handle("deletionRequests", () =>
        Effect.map(Effect.flatMap(CurrentActor, orgs.deletionRequests), (deletion_requests) => ({ deletion_requests })))
      .handle("requestOpening", ({ payload }) =>
        Effect.gen(function*() {
          const actor = yield* CurrentActor
          const note = payload.note?.trim() || null
          return { request: yield* openings.request(actor, payload.endpoint, note) }
        }))
      .handle("openings", () =>
        Effect.flatMap(CurrentActor, (actor) =>
          openings.forOrg(actor.org_id)))
  }))
