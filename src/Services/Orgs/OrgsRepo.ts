import { SqlClient } from "@effect/sql"
import { Effect, Option } from "effect"
import type { PlanId } from "../../Domain/Plans.js"
import type { OrgRole } from "../Auth/Current.js"

/** SQL for orgs, memberships, invitations and data-deletion requests. */
export interface OrgRow {
  readonly id: string
  readonly name: string
  readonly plan: PlanId
  readonly created_at: Date
}

export interface MemberRow {
  readonly user_id: string
  readonly email: string
  readonly name: string | null
  readonly role: OrgRole
  readonly created_at: Date
}

export interface InviteRow {
  readonly id: string
  readonly org_id: string
  readonly email: string
  readonly role: OrgRole
  readonly invited_by_email: string
  readonly created_at: Date
  readonly expires_at: Date
}

export interface DeletionRequestRow {
  readonly id: string
  readonly status: "pending" | "completed" | "cancelled"
  readonly reason: string | null
  readonly requested_by_email: string
  readonly created_at: Date
}

const first = <A>(rows: ReadonlyArray<A>) => Option.fromNullable(rows[0])

export class OrgsRepo extends Effect.Service<OrgsRepo>()("Orgs/OrgsRepo", {
  effect: Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient

    const insertOrg = (org: { id: string; name: string; createdAt: Date }) =>
      sql<OrgRow>`
        INSERT INTO orgs (id, name, created_at) VALUES (${org.id}, ${org.name}, ${org.createdAt})
        RETURNING id, name, plan, created_at`.pipe(Effect.map((rows) => rows[0]!), Effect.orDie)

    const insertMember = (orgId: string, userId: string, role: OrgRole, now: Date) =>
      sql`INSERT INTO org_members (org_id, user_id, role, created_at) VALUES (${orgId}, ${userId}, ${role}, ${now})`
        .pipe(
          Effect.asVoid,
          Effect.orDie
        )

    const org = (orgId: string) =>
      sql<OrgRow>`SELECT id, name, plan, created_at FROM orgs WHERE id = ${orgId}`.pipe(Effect.map(first), Effect.orDie)

    /** Serialises changes that count against the org's limits (seats, agents, keys). */
    const lockOrg = (orgId: string) =>
      sql<OrgRow>`SELECT id, name, plan, created_at FROM orgs WHERE id = ${orgId} FOR UPDATE`.pipe(
        Effect.map(first),
        Effect.orDie
      )

    const members = (orgId: string) =>
      sql<MemberRow>`
        SELECT m.user_id, u.email, u.name, m.role, m.created_at
        FROM org_members m JOIN users u ON u.id = m.user_id
        WHERE m.org_id = ${orgId}
        ORDER BY m.created_at DESC, m.user_id`.pipe(Effect.orDie)

    const member = (orgId: string, userId: string) =>
      sql<MemberRow>`
        SELECT m.user_id, u.email, u.name, m.role, m.created_at
        FROM org_members m JOIN users u ON u.id = m.user_id
        WHERE m.org_id = ${orgId} AND m.user_id = ${userId}`.pipe(Effect.map(first), Effect.orDie)

    const memberByEmail = (orgId: string, email: string) =>
      sql<{ user_id: string }>`
        SELECT m.user_id FROM org_members m JOIN users u ON u.id = m.user_id
        WHERE m.org_id = ${orgId} AND lower(u.email) = ${email}`.pipe(Effect.map(first), Effect.orDie)

    const counts = (orgId: string, now: Date) =>
      sql<{ members: string; owners: string; pending_invites: string }>`
        SELECT
          (SELECT count(*) FROM org_members WHERE org_id = ${orgId}) AS members,
          (SELECT count(*) FROM org_members WHERE org_id = ${orgId} AND role = 'owner') AS owners,
          (SELECT count(*) FROM org_invites
            WHERE org_id = ${orgId} AND accepted_at IS NULL AND revoked_at IS NULL AND expires_at > ${now}) AS pending_invites`
        .pipe(
          Effect.map((rows) => ({
            members: Number(rows[0]!.members),
            owners: Number(rows[0]!.owners),
            pendingInvites: Number(rows[0]!.pending_invites)
          })),
          Effect.orDie
        )

    const setRole = (orgId: string, userId: string, role: OrgRole) =>
      sql`UPDATE org_members SET role = ${role} WHERE org_id = ${orgId} AND user_id = ${userId}`.pipe(
        Effect.asVoid,
        Effect.orDie
      )

    /** Removes a member; the org keys they made stop working for good. */
    const removeMember = (orgId: string, userId: string, now: Date) =>
      Effect.all([
        sql`DELETE FROM org_members WHERE org_id = ${orgId} AND user_id = ${userId}`,
        sql`UPDATE org_keys SET revoked_at = ${now} WHERE org_id = ${orgId} AND created_by = ${userId} AND revoked_at IS NULL`
      ], { discard: true }).pipe(Effect.orDie)

    const revokePendingInvitesFor = (orgId: string, email: string, now: Date) =>
      sql`UPDATE org_invites SET revoked_at = ${now}
          WHERE org_id = ${orgId} AND lower(email) = ${email} AND accepted_at IS NULL AND revoked_at IS NULL`.pipe(
        Effect.asVoid,
        Effect.orDie
      )

    const insertInvite = (invite: {
      id: string
      orgId: string
      email: string
      role: OrgRole
      tokenHash: string
      invitedBy: string
      invitedByEmail: string
      createdAt: Date
      expiresAt: Date
    }) =>
      sql<InviteRow>`
        INSERT INTO org_invites (id, org_id, email, role, token_hash, invited_by, invited_by_email, created_at, expires_at)
        VALUES (${invite.id}, ${invite.orgId}, ${invite.email}, ${invite.role}, ${invite.tokenHash}, ${invite.invitedBy},
                ${invite.invitedByEmail}, ${invite.createdAt}, ${invite.expiresAt})
        RETURNING id, org_id, email, role, invited_by_email, created_at, expires_at`.pipe(
        Effect.map((rows) => rows[0]!),
        Effect.orDie
      )

    const pendingInvites = (orgId: string, now: Date) =>
      sql<InviteRow>`
        SELECT id, org_id, email, role, invited_by_email, created_at, expires_at FROM org_invites
        WHERE org_id = ${orgId} AND accepted_at IS NULL AND revoked_at IS NULL AND expires_at > ${now}
        ORDER BY created_at DESC, id`.pipe(Effect.orDie)

    const revokeInvite = (orgId: string, inviteId: string, now: Date) =>
      sql<{ id: string }>`
        UPDATE org_invites SET revoked_at = ${now}
        WHERE id = ${inviteId} AND org_id = ${orgId} AND accepted_at IS NULL AND revoked_at IS NULL AND expires_at > ${now}
        RETURNING id`.pipe(Effect.map((rows) => rows.length > 0), Effect.orDie)

    /** A usable invitation by its token hash, locked for acceptance. */
    const inviteForAcceptance = (tokenHash: string, now: Date) =>
      sql<InviteRow>`
        SELECT id, org_id, email, role, invited_by_email, created_at, expires_at FROM org_invites
        WHERE token_hash = ${tokenHash} AND accepted_at IS NULL AND revoked_at IS NULL AND expires_at > ${now}
        FOR UPDATE`.pipe(Effect.map(first), Effect.orDie)

    const markInviteAccepted = (inviteId: string, userId: string, now: Date) =>
      sql`UPDATE org_invites SET accepted_at = ${now}, accepted_by = ${userId} WHERE id = ${inviteId}`.pipe(
        Effect.asVoid,
        Effect.orDie
      )

    const insertDeletionRequest = (request: {
      id: string
      orgId: string
      userId: string
      email: string
      reason: string | null
      createdAt: Date
    }) =>
      sql<DeletionRequestRow>`
        INSERT INTO deletion_requests (id, org_id, requested_by, requested_by_email, reason, status, created_at)
        VALUES (${request.id}, ${request.orgId}, ${request.userId}, ${request.email}, ${request.reason}, 'pending',
                ${request.createdAt})
        RETURNING id, status, reason, requested_by_email, created_at`.pipe(Effect.map((rows) => rows[0]!), Effect.orDie)

    const deletionRequests = (orgId: string) =>
      sql<DeletionRequestRow>`
        SELECT id, status, reason, requested_by_email, created_at FROM deletion_requests
        WHERE org_id = ${orgId} ORDER BY created_at DESC, id`.pipe(Effect.orDie)

    return {
      insertOrg,
      insertMember,
      org,
      lockOrg,
      members,
      member,
      memberByEmail,
      counts,
      setRole,
      removeMember,
      revokePendingInvitesFor,
      insertInvite,
      pendingInvites,
      revokeInvite,
      inviteForAcceptance,
      markInviteAccepted,
      insertDeletionRequest,
      deletionRequests
    } as const
  })
}) {}
