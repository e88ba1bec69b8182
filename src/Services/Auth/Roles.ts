import { Effect } from "effect"
import type { OrgActor } from "../../Domain/Current.js"
import { Forbidden } from "../../Errors/ApiErrors.js"

/** Owner-only actions answer 403 `forbidden` to members (and to org keys of members). */
export const requireOwner = (actor: OrgActor) =>
  actor.role === "owner" ? Effect.void : Effect.fail(new Forbidden({ message: "Only an org owner can do this" }))
