import { Model, SqlClient, SqlSchema } from "@effect/sql"
import { Effect, Option, Schema } from "effect"
import { DeletionRequest } from "../../Domain/DeletionRequest.js"
import { Invite, Member, Org, type Role } from "../../Domain/Org.js"
import type { PlanId } from "../../Domain/Plans.js"
import { statementRows } from "../StatementRows.js"

/**
 * SQL for orgs (the `Org` model), memberships (`Member`), invitations (`Invite`) and
 * data-deletion requests.
 */
type OrgRole = typeof Role.Type

/** The org as billing reads it through this repository (`BillingRepo.org`). */
export type OrgRow = Org

const deletionColumns =
  "id, org_id, requested_by, status, reason, requested_by_email, created_at, completed_at, summary"

const Counts = Schema.Struct({
  members: Schema.NumberFromString,
  owners: Schema.NumberFromString,
  pending_invites: Schema.NumberFromString
})

/** Most reads take an org id, some a moment too. */
const OrgAt = Schema.Struct({ orgId: Schema.String, now: Schema.DateFromSelf })

export class OrgsRepo extends Effect.Service<OrgsRepo>()("Orgs/OrgsRepo", {
  effect: Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const deletionRequestRows = statementRows(DeletionRequest)
    const orgs = yield* Model.makeRepository(Org, { tableName: "orgs", spanPrefix: "OrgsRepo", idColumn: "id" })
    const invites = yield* Model.makeRepository(Invite, {
      tableName: "org_invites",
      spanPrefix: "OrgsRepo",
      idColumn: "id"
    })

    const insertMember = (orgId: string, userId: string, role: OrgRole, now: Date) =>
      sql`INSERT INTO org_members (org_id, user_id, role, created_at) VALUES (${orgId}, ${userId}, ${role}, ${now})`
        .pipe(
          Effect.asVoid,
          Effect.orDie
        )

    const findOrg = SqlSchema.findOne({
      Request: Schema.String,
      Result: Org,
      execute: (orgId) => sql`SELECT id, name, plan, created_at FROM orgs WHERE id = ${orgId}`
    })
    const org = (orgId: string) => findOrg(orgId).pipe(Effect.orDie)

    /** Whether the org exists and is not closed (its data deleted). */
    const isOpen = (orgId: string) =>
      sql`SELECT 1 AS one FROM orgs WHERE id = ${orgId} AND closed_at IS NULL`.pipe(
        Effect.map((rows) => rows.length > 0),
        Effect.orDie
      )

    /** Serialises changes that count against the org's limits (seats, agents, keys). */
    const findOrgForUpdate = SqlSchema.findOne({
      Request: Schema.String,
      Result: Org,
      execute: (orgId) => sql`SELECT id, name, plan, created_at FROM orgs WHERE id = ${orgId} FOR UPDATE`
    })
    const lockOrg = (orgId: string) => findOrgForUpdate(orgId).pipe(Effect.orDie)

    const findMembers = SqlSchema.findAll({
      Request: Schema.String,
      Result: Member,
      execute: (orgId) =>
        sql`
          SELECT m.user_id, u.email, u.name, m.role, m.created_at AS joined_at
          FROM org_members m JOIN users u ON u.id = m.user_id
          WHERE m.org_id = ${orgId}
          ORDER BY m.created_at DESC, m.user_id`
    })
    const members = (orgId: string) => findMembers(orgId).pipe(Effect.orDie)

    const findMember = SqlSchema.findOne({
      Request: Schema.Struct({ orgId: Schema.String, userId: Schema.String }),
      Result: Member,
      execute: ({ orgId, userId }) =>
        sql`
          SELECT m.user_id, u.email, u.name, m.role, m.created_at AS joined_at
          FROM org_members m JOIN users u ON u.id = m.user_id
          WHERE m.org_id = ${orgId} AND m.user_id = ${userId}`
    })
    const member = (orgId: string, userId: string) => findMember({ orgId, userId }).pipe(Effect.orDie)

    const findMemberByEmail = SqlSchema.findOne({
      Request: Schema.Struct({ orgId: Schema.String, email: Schema.String }),
      Result: Schema.Struct({ user_id: Schema.String }),
      execute: ({ email, orgId }) =>
        sql`
          SELECT m.user_id FROM org_members m JOIN users u ON u.id = m.user_id
          WHERE m.org_id = ${orgId} AND lower(u.email) = ${email}`
    })
    const memberByEmail = (orgId: string, email: string) => findMemberByEmail({ orgId, email }).pipe(Effect.orDie)

    const countsAt = SqlSchema.single({
      Request: OrgAt,
      Result: Counts,
      execute: ({ now, orgId }) =>
        sql`
          SELECT
            (SELECT count(*) FROM org_members WHERE org_id = ${orgId}) AS members,
            (SELECT count(*) FROM org_members WHERE org_id = ${orgId} AND role = 'owner') AS owners,
            (SELECT count(*) FROM org_invites
              WHERE org_id = ${orgId} AND accepted_at IS NULL AND revoked_at IS NULL AND expires_at > ${now}) AS pending_invites`
    })
    const counts = (orgId: string, now: Date) =>
      countsAt({ orgId, now }).pipe(
        Effect.map((row) => ({ members: row.members, owners: row.owners, pendingInvites: row.pending_invites })),
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

    const findPendingInvites = SqlSchema.findAll({
      Request: OrgAt,
      Result: Invite,
      execute: ({ now, orgId }) =>
        sql`
          SELECT id, org_id, email, role, invited_by_email, created_at, expires_at FROM org_invites
          WHERE org_id = ${orgId} AND accepted_at IS NULL AND revoked_at IS NULL AND expires_at > ${now}
          ORDER BY created_at DESC, id`
    })
    const pendingInvites = (orgId: string, now: Date) => findPendingInvites({ orgId, now }).pipe(Effect.orDie)

    const revokeInvite = (orgId: string, inviteId: string, now: Date) =>
      sql`
        UPDATE org_invites SET revoked_at = ${now}
        WHERE id = ${inviteId} AND org_id = ${orgId} AND accepted_at IS NULL AND revoked_at IS NULL AND expires_at > ${now}
        RETURNING id`.pipe(Effect.map((rows) => rows.length > 0), Effect.orDie)

    /** A usable invitation by its token hash, locked for acceptance. */
    const findInviteForAcceptance = SqlSchema.findOne({
      Request: Schema.Struct({ tokenHash: Schema.String, now: Schema.DateFromSelf }),
      Result: Invite,
      execute: ({ now, tokenHash }) =>
        sql`
          SELECT id, org_id, email, role, invited_by_email, created_at, expires_at FROM org_invites
          WHERE token_hash = ${tokenHash} AND accepted_at IS NULL AND revoked_at IS NULL AND expires_at > ${now}
          FOR UPDATE`
    })
    const inviteForAcceptance = (tokenHash: string, now: Date) =>
      findInviteForAcceptance({ tokenHash, now }).pipe(Effect.orDie)

    const markInviteAccepted = (inviteId: string, userId: string, now: Date) =>
      sql`UPDATE org_invites SET accepted_at = ${now}, accepted_by = ${userId} WHERE id = ${inviteId}`.pipe(
        Effect.asVoid,
        Effect.orDie
      )

    const insertDeletionRequest = (request: typeof DeletionRequest.insert.Type) =>
      deletionRequestRows.single(sql`
            INSERT INTO deletion_requests (id, org_id, requested_by, requested_by_email, reason, status, created_at)
            VALUES (${request.id}, ${request.org_id}, ${request.requested_by}, ${request.requested_by_email},
                    ${request.reason}, ${request.status}, ${request.created_at})
            RETURNING ${sql.unsafe(deletionColumns)}`).pipe(Effect.orDie)

    const findDeletionRequests = SqlSchema.findAll({
      Request: Schema.String,
      Result: DeletionRequest,
      execute: (orgId) =>
        sql`
          SELECT ${sql.unsafe(deletionColumns)} FROM deletion_requests
          WHERE org_id = ${orgId} ORDER BY created_at DESC, id`
    })
    const deletionRequests = (orgId: string) => findDeletionRequests(orgId).pipe(Effect.orDie)

    const findDeletionRequestsBy = SqlSchema.findAll({
      Request: Schema.String,
      Result: DeletionRequest,
      execute: (userId) =>
        sql`
          SELECT ${sql.unsafe(deletionColumns)} FROM deletion_requests
          WHERE requested_by = ${userId} ORDER BY created_at DESC, id`
    })
    /** The requests a person filed, in any org (their account page shows how each ended). */
    const deletionRequestsBy = (userId: string) => findDeletionRequestsBy(userId).pipe(Effect.orDie)

    const LowBalance = Schema.Struct({ low_balance_credits: Schema.BigInt })
    const findLowBalance = SqlSchema.findOne({
      Request: Schema.String,
      Result: LowBalance,
      execute: (orgId) => sql`SELECT low_balance_credits FROM orgs WHERE id = ${orgId}`
    })
    /** The org's low-balance alert in credits (none: no such org). */
    const lowBalanceCredits = (orgId: string) =>
      findLowBalance(orgId).pipe(Effect.map(Option.map((row) => row.low_balance_credits)), Effect.orDie)

    const updateLowBalance = SqlSchema.findOne({
      Request: Schema.Struct({ orgId: Schema.String, credits: Schema.BigInt }),
      Result: LowBalance,
      execute: ({ credits, orgId }) =>
        sql`UPDATE orgs SET low_balance_credits = ${credits} WHERE id = ${orgId} RETURNING low_balance_credits`
    })
    const setLowBalanceCredits = (orgId: string, credits: bigint) =>
      updateLowBalance({ orgId, credits }).pipe(Effect.map(Option.map((row) => row.low_balance_credits)), Effect.orDie)

    /** The org's plan, as a paid plan starts or ends (limits and quotas read it at once). */
    const setPlan = (orgId: string, plan: typeof PlanId.Type) =>
      sql`UPDATE orgs SET plan = ${plan} WHERE id = ${orgId}`.pipe(Effect.asVoid)

    return {
      setPlan,
      insertOrg: orgs.insert,
      insertMember,
      org,
      isOpen,
      lockOrg,
      members,
      member,
      memberByEmail,
      counts,
      setRole,
      removeMember,
      revokePendingInvitesFor,
      insertInvite: invites.insert,
      pendingInvites,
      revokeInvite,
      inviteForAcceptance,
      markInviteAccepted,
      insertDeletionRequest,
      deletionRequests,
      deletionRequestsBy,
      lowBalanceCredits,
      setLowBalanceCredits
    } as const
  })
}) {}
