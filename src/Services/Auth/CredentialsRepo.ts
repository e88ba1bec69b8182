import { SqlClient, SqlSchema } from "@effect/sql"
import { Data, Effect, Schema, Struct } from "effect"
import { AgentRecord } from "../../Domain/Agent.js"
import { OrgId, UserId } from "../../Domain/Ids.js"
import { OrgKey } from "../../Domain/OrgKey.js"
import { PlanId } from "../../Domain/Plans.js"
import { User } from "../../Domain/User.js"

/** A cached credential that changed since it was cached: read it again and retry. */
export class StaleCredential extends Data.TaggedError("StaleCredential")<{}> {}

/** Lookups of credentials by the hash of their secret; rows decoded (credits as bigint). */
const OrgRole = Schema.Literal("owner", "member")

export const AgentKeyRow = Schema.Struct({
  ...AgentRecord.fields,
  org_plan: PlanId,
  key_prefix: Schema.String
})
export type AgentKeyRow = typeof AgentKeyRow.Type

export const SessionRow = Schema.Struct({
  session_id: Schema.String,
  user_id: User.fields.id,
  ...Struct.pick(User.fields, "email", "email_verified")
})
export type SessionRow = typeof SessionRow.Type

/** The key's id stays text: read on every request an org key makes, it is only passed back to SQL. */
export const OrgKeyRow = Schema.Struct({
  id: Schema.String,
  org_id: OrgKey.fields.org_id,
  org_plan: PlanId,
  scope: OrgKey.fields.scope,
  user_id: User.fields.id,
  email: User.fields.email,
  role: OrgRole
})
export type OrgKeyRow = typeof OrgKeyRow.Type

export const MembershipRow = Schema.Struct({ org_id: OrgId, role: OrgRole, org_plan: PlanId })
export type MembershipRow = typeof MembershipRow.Type

/** A cached credential to check again: what the cache held of its agent. */
export const CachedCheck = Schema.Struct({
  idx: Schema.Number,
  agent_id: Schema.String,
  key_hash: Schema.String,
  mode: Schema.String,
  org_plan: Schema.String,
  ip_allowlist: Schema.Array(Schema.String),
  monthly_budget_credits: Schema.String,
  approval_threshold_credits: Schema.NullOr(Schema.String)
})

export class CredentialsRepo extends Effect.Service<CredentialsRepo>()("Auth/CredentialsRepo", {
  effect: Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient

    /** An agent's key row, found by the column a credential names (its key's hash, or its id). */
    const findAgentBy = (column: "key_hash" | "id") =>
      SqlSchema.findOne({
        Request: Schema.String,
        Result: AgentKeyRow,
        execute: (value) =>
          sql`
            SELECT a.id, a.org_id, o.plan AS org_plan, a.name, a.mode, a.status, a.monthly_budget_credits,
                   a.approval_threshold_credits, a.ip_allowlist, a.key_prefix
            FROM agents a JOIN orgs o ON o.id = a.org_id
            WHERE ${sql(`a.${column}`)} = ${value}`
      })
    const findAgent = findAgentBy("key_hash")
    const agentByKeyHash = (hash: string) => findAgent(hash).pipe(Effect.orDie)

    const findAgentById = findAgentBy("id")
    /** An agent by id, as `agentByKeyHash` reads it: for a credential that names the agent (an OAuth grant). */
    const agentById = (agentId: string) => findAgentById(agentId).pipe(Effect.orDie)

    const findSession = SqlSchema.findOne({
      Request: Schema.Struct({ hash: Schema.String, now: Schema.DateFromSelf }),
      Result: SessionRow,
      execute: ({ hash, now }) =>
        sql`
          SELECT s.id AS session_id, s.user_id, u.email, u.email_verified
          FROM sessions s JOIN users u ON u.id = s.user_id
          WHERE s.token_hash = ${hash} AND s.revoked_at IS NULL AND s.expires_at > ${now}`
    })
    const sessionByTokenHash = (hash: string, now: Date) => findSession({ hash, now }).pipe(Effect.orDie)

    const findOrgKey = SqlSchema.findOne({
      Request: Schema.String,
      Result: OrgKeyRow,
      execute: (hash) =>
        sql`
          SELECT k.id, k.org_id, o.plan AS org_plan, k.scope, k.created_by AS user_id, u.email, m.role
          FROM org_keys k
          JOIN orgs o ON o.id = k.org_id
          JOIN users u ON u.id = k.created_by
          JOIN org_members m ON m.org_id = k.org_id AND m.user_id = k.created_by
          WHERE k.key_hash = ${hash} AND k.revoked_at IS NULL`
    })
    /** An unrevoked org key whose maker is still a member of its org, with the maker's current role. */
    const orgKeyByHash = (hash: string) => findOrgKey(hash).pipe(Effect.orDie)

    const findMembership = SqlSchema.findOne({
      Request: Schema.Struct({ orgId: Schema.String, userId: UserId }),
      Result: MembershipRow,
      execute: ({ orgId, userId }) =>
        sql`
          SELECT m.org_id, m.role, o.plan AS org_plan FROM org_members m JOIN orgs o ON o.id = m.org_id
          WHERE m.org_id = ${orgId} AND m.user_id = ${userId}`
    })
    const membership = (orgId: string, userId: UserId) => findMembership({ orgId, userId }).pipe(Effect.orDie)

    /** Usage stamps are written at most once a minute per key (and per agent address). */
    const touchAgentKey = (agentId: string, address: string, now: Date) =>
      Effect.all([
        sql`UPDATE agents SET key_last_used_at = ${now}
            WHERE id = ${agentId} AND (key_last_used_at IS NULL OR key_last_used_at <= ${now}::timestamptz - interval '1 minute')`,
        sql`INSERT INTO agent_key_addresses (agent_id, address, first_seen_at, last_seen_at)
            VALUES (${agentId}, ${address}, ${now}, ${now})
            ON CONFLICT (agent_id, address) DO UPDATE SET last_seen_at = excluded.last_seen_at
            WHERE agent_key_addresses.last_seen_at <= excluded.last_seen_at - interval '1 minute'`
      ], { discard: true }).pipe(Effect.orDie)

    const touchOrgKey = (keyId: string, now: Date) =>
      sql`UPDATE org_keys SET last_used_at = ${now}
          WHERE id = ${keyId} AND (last_used_at IS NULL OR last_used_at <= ${now}::timestamptz - interval '1 minute')`
        .pipe(
          Effect.asVoid,
          Effect.orDie
        )

    const stillValidRows = SqlSchema.findAll({
      Request: Schema.Array(CachedCheck),
      Result: Schema.Struct({ idx: Schema.Number }),
      execute: (checks) =>
        sql`
          SELECT c.idx FROM jsonb_to_recordset(${JSON.stringify(checks)}::jsonb)
            AS c (idx int, agent_id uuid, key_hash text, mode text, org_plan text, ip_allowlist jsonb,
                  monthly_budget_credits bigint, approval_threshold_credits bigint)
          JOIN agents a ON a.id = c.agent_id JOIN orgs o ON o.id = a.org_id
          WHERE a.key_hash = c.key_hash AND a.status = 'active' AND a.mode = c.mode AND o.plan = c.org_plan
            AND a.ip_allowlist = c.ip_allowlist AND a.monthly_budget_credits = c.monthly_budget_credits
            AND a.approval_threshold_credits IS NOT DISTINCT FROM c.approval_threshold_credits`
    })
    /**
     * Cached agent keys checked again, all in one statement (in the transaction of the
     * writes they pay for): the indexes of those whose key is still the agent's, the agent
     * active, and its mode, allowlist, budget, approval threshold and org plan the ones the
     * cache held.
     */
    const stillValid = (checks: ReadonlyArray<typeof CachedCheck.Type>) =>
      stillValidRows(checks).pipe(Effect.map((rows) => new Set(rows.map((row) => row.idx))), Effect.orDie)

    return {
      agentByKeyHash,
      agentById,
      sessionByTokenHash,
      orgKeyByHash,
      membership,
      touchAgentKey,
      touchOrgKey,
      stillValid
    } as const
  })
}) {}
