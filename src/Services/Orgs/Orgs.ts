import { SqlClient } from "@effect/sql"
import { Effect, Option } from "effect"
import { randomUUID } from "node:crypto"
import type { OrgActor, OrgRole, SessionUser } from "../../Domain/Current.js"
import { normalizeEmail } from "../../Domain/Email.js"
import { DeletionRequestId, InviteId, OrgId, type UserId } from "../../Domain/Ids.js"
import type { Org, OrgJson } from "../../Domain/Org.js"
import { plans } from "../../Domain/Plans.js"
import { newSecret, secretPrefixes } from "../../Domain/Secrets.js"
import { currentDate } from "../../Domain/Timestamps.js"
import {
  Conflict,
  Forbidden,
  InvalidToken,
  LastOwner,
  NotFound,
  PhoneUnverified,
  PlanLimit
} from "../../Errors/ApiErrors.js"
import { AuthConfig } from "../Auth/AuthConfig.js"
import { DAY_MS } from "../Auth/Records.js"
import { requireOwner } from "../Auth/Roles.js"
import { Users } from "../Auth/Users.js"
import { Ledger } from "../Ledger/Ledger.js"
import { Mailer } from "../Mailer/Mailer.js"
import { sendNow } from "../Mailer/MailNow.js"
import { sha256Hex } from "../SecretBox/Hashes.js"
import { OrgsRepo } from "./OrgsRepo.js"

/** Invitations are valid 7 days. */
export const INVITE_LIFETIME_MS = 7 * DAY_MS

/** The wire's org: the record with the caller's role in it. */
const withRole = (org: Org, role: OrgRole): OrgJson => ({ ...org, role })

const noSuchMember = new NotFound({ message: "No such member of this org" })
const lastOwner = new LastOwner({ message: "An org must keep at least one owner" })
const badInvite = new InvalidToken({ message: "This invitation is unknown, already used, withdrawn or expired" })

const seatLimit = (plan: keyof typeof plans) =>
  new PlanLimit({
    message: `The ${plans[plan].name} plan allows ${plans[plan].max_seats} seats (members and pending invitations)`
  })

/** Orgs and the people in them. Owner-only actions check the actor's current role. */
export class Orgs extends Effect.Service<Orgs>()("Orgs/Orgs", {
  dependencies: [OrgsRepo.Default, Users.Default, AuthConfig.Default],
  effect: Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const repo = yield* OrgsRepo
    const users = yield* Users
    const mailer = yield* Mailer
    const ledger = yield* Ledger
    const config = yield* AuthConfig
    const transaction = <A, E, R>(effect: Effect.Effect<A, E, R>) =>
      effect.pipe(sql.withTransaction, Effect.catchTag("SqlError", Effect.die))

    const lockedOrg = (orgId: string) =>
      Effect.flatMap(
        repo.lockOrg(orgId),
        Option.match({
          onNone: () => Effect.fail(new NotFound({ message: "No such org" })),
          onSome: Effect.succeed
        })
      )

    /**
     * A new org with the caller as its owner. The caller needs a verified phone.
     * Its trial credits are granted in the same transaction, so no org exists without them.
     */
    const create = (user: SessionUser, name: string) =>
      Effect.gen(function*() {
        const person = yield* users.byId(user.user_id)
        if (Option.isNone(person) || !person.value.phone_verified) {
          return yield* new PhoneUnverified({ message: "Verify a phone number first: POST /v1/me/phone" })
        }
        return yield* transaction(Effect.gen(function*() {
          const at = yield* currentDate
          const org = yield* repo.insertOrg({ id: OrgId.make(randomUUID()), name, created_at: at })
          yield* repo.insertMember(org.id, user.user_id, "owner", at)
          yield* ledger.grantTrial(org.id)
          return withRole(org, "owner")
        }))
      })

    const get = (actor: OrgActor) =>
      Effect.flatMap(
        repo.org(actor.org_id),
        Option.match({
          onNone: () => Effect.fail(new NotFound({ message: "No such org" })),
          onSome: (org) => Effect.succeed(withRole(org, actor.role))
        })
      )

    const members = (actor: OrgActor) => repo.members(actor.org_id)

    /** Invites an address (owner only); the seat limit counts members and pending invitations. */
    const invite = (actor: OrgActor, email: string, role: OrgRole, baseUrl: string) =>
      Effect.gen(function*() {
        yield* requireOwner(actor)
        const address = normalizeEmail(email)
        const token = newSecret(secretPrefixes.invite)
        const { invite, orgName } = yield* transaction(Effect.gen(function*() {
          const org = yield* lockedOrg(actor.org_id)
          const at = yield* currentDate
          if (Option.isSome(yield* repo.memberByEmail(org.id, address))) {
            return yield* new Conflict({ message: `${address} is already a member of this org` })
          }
          // A new invitation to the same address replaces the pending one.
          yield* repo.revokePendingInvitesFor(org.id, address, at)
          const counts = yield* repo.counts(org.id, at)
          if (counts.members + counts.pendingInvites >= plans[org.plan].max_seats) return yield* seatLimit(org.plan)
          const invite = yield* repo.insertInvite({
            id: InviteId.make(randomUUID()),
            org_id: org.id,
            email: address,
            role,
            token_hash: sha256Hex(token),
            invited_by: actor.user_id,
            invited_by_email: actor.email,
            created_at: at,
            expires_at: new Date(at.getTime() + INVITE_LIFETIME_MS)
          })
          return { invite, orgName: org.name }
        }))
        const link = `${baseUrl}${config.dashboardPath}/invites/accept?token=${encodeURIComponent(token)}`
        yield* sendNow(mailer, {
          to: address,
          subject: `You are invited to ${orgName}`,
          text: [
            `${actor.email} invited you to join ${orgName} as ${role === "owner" ? "an owner" : "a member"}.`,
            "",
            "Sign in, then accept the invitation here (valid 7 days, works once):",
            link,
            "",
            `Scripts accept it with POST /auth/invites/accept and {"token": "<the token in the link>"}.`
          ].join("\n")
        })
        return invite
      })

    const invites = (actor: OrgActor) => Effect.flatMap(currentDate, (at) => repo.pendingInvites(actor.org_id, at))

    const revokeInvite = (actor: OrgActor, inviteId: InviteId) =>
      Effect.gen(function*() {
        yield* requireOwner(actor)
        const revoked = yield* repo.revokeInvite(actor.org_id, inviteId, yield* currentDate)
        if (!revoked) return yield* new NotFound({ message: "No such pending invitation" })
        return { status: "revoked" as const }
      })

    /** A signed-in person accepts an invitation addressed to their email. */
    const acceptInvite = (user: SessionUser, token: string) =>
      transaction(Effect.gen(function*() {
        const at = yield* currentDate
        const found = yield* repo.inviteForAcceptance(sha256Hex(token), at)
        if (Option.isNone(found)) return yield* badInvite
        const invite = found.value
        if (normalizeEmail(invite.email) !== normalizeEmail(user.email)) {
          return yield* new Forbidden({
            message: "This invitation is for another email address; sign in as that address"
          })
        }
        const org = yield* lockedOrg(invite.org_id)
        const existing = yield* repo.member(org.id, user.user_id)
        if (Option.isSome(existing)) {
          yield* repo.markInviteAccepted(invite.id, user.user_id, at)
          return withRole(org, existing.value.role)
        }
        // This invitation's seat was already counted while pending.
        const counts = yield* repo.counts(org.id, at)
        if (counts.members >= plans[org.plan].max_seats) return yield* seatLimit(org.plan)
        yield* repo.insertMember(org.id, user.user_id, invite.role, at)
        yield* repo.markInviteAccepted(invite.id, user.user_id, at)
        return withRole(org, invite.role)
      }))

    /** Changes a member's role (owner only); the last owner cannot step down. */
    const changeRole = (actor: OrgActor, userId: UserId, role: OrgRole) =>
      Effect.gen(function*() {
        yield* requireOwner(actor)
        return yield* transaction(Effect.gen(function*() {
          const org = yield* lockedOrg(actor.org_id)
          const target = yield* repo.member(org.id, userId)
          if (Option.isNone(target)) return yield* noSuchMember
          if (target.value.role === "owner" && role !== "owner") {
            const counts = yield* repo.counts(org.id, yield* currentDate)
            if (counts.owners <= 1) return yield* lastOwner
          }
          yield* repo.setRole(org.id, userId, role)
          return { ...target.value, role }
        }))
      })

    /** Removes a member (owner only), or lets a member leave; the last owner cannot go. */
    const removeMember = (actor: OrgActor, userId: UserId) =>
      Effect.gen(function*() {
        if (userId !== actor.user_id) yield* requireOwner(actor)
        return yield* transaction(Effect.gen(function*() {
          const org = yield* lockedOrg(actor.org_id)
          const at = yield* currentDate
          const target = yield* repo.member(org.id, userId)
          if (Option.isNone(target)) return yield* noSuchMember
          if (target.value.role === "owner") {
            const counts = yield* repo.counts(org.id, at)
            if (counts.owners <= 1) return yield* lastOwner
          }
          yield* repo.removeMember(org.id, userId, at)
          return { status: "removed" as const }
        }))
      })

    /** Records a request to delete the org's data (owner, session only). */
    const requestDeletion = (actor: OrgActor, reason: string | null) =>
      Effect.gen(function*() {
        yield* requireOwner(actor)
        return yield* repo.insertDeletionRequest({
          id: DeletionRequestId.make(randomUUID()),
          org_id: actor.org_id,
          requested_by: actor.user_id,
          requested_by_email: actor.email,
          status: "pending",
          reason,
          created_at: yield* currentDate
        })
      })

    const deletionRequests = (actor: OrgActor) => repo.deletionRequests(actor.org_id)

    /** The requests a person filed, however they ended (after an erasure the org is gone). */
    const myDeletionRequests = (userId: string) => repo.deletionRequestsBy(userId)

    return {
      create,
      get,
      members,
      invite,
      invites,
      revokeInvite,
      acceptInvite,
      changeRole,
      removeMember,
      requestDeletion,
      deletionRequests,
      myDeletionRequests
    } as const
  })
}) {}
