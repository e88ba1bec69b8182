import { SqlClient } from "@effect/sql"
import { Effect, Option } from "effect"
import type { PlanId } from "../../Domain/Plans.js"
import type { OrgRole } from "./Current.js"

/** Lookups of credentials by the hash of their secret. */
export interface AgentKeyRow {
  readonly id: string
  readonly org_id: string
  readonly org_plan: PlanId
  readonly name: string
  readonly mode: "test" | "live"
  readonly status: "active" | "disabled"
  readonly monthly_budget_credits: string
  readonly approval_threshold_credits: string | null
  readonly ip_allowlist: ReadonlyArray<string>
  readonly key_prefix: string
}

export interface SessionRow {
  readonly session_id: string
  readonly user_id: string
  readonly email: string
  readonly email_verified: boolean
}

export interface OrgKeyRow {
  readonly id: string
  readonly org_id: string
  readonly org_plan: PlanId
  readonly scope: "read" | "write"
  readonly user_id: string
  readonly email: string
  readonly role: OrgRole
}

export interface MembershipRow {
  readonly role: OrgRole
  readonly org_plan: PlanId
}

const first = <A>(rows: ReadonlyArray<A>) => Option.fromNullable(rows[0])

export class CredentialsRepo extends Effect.Service<CredentialsRepo>()("Auth/CredentialsRepo", {
  effect: Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient

    const agentByKeyHash = (hash: string) =>
      sql<AgentKeyRow>`
        SELECT a.id, a.org_id, o.plan AS org_plan, a.name, a.mode, a.status, a.monthly_budget_credits,
               a.approval_threshold_credits, a.ip_allowlist, a.key_prefix
        FROM agents a JOIN orgs o ON o.id = a.org_id
        WHERE a.key_hash = ${hash}`.pipe(Effect.map(first), Effect.orDie)

    const sessionByTokenHash = (hash: string, now: Date) =>
      sql<SessionRow>`
        SELECT s.id AS session_id, s.user_id, u.email, u.email_verified
        FROM sessions s JOIN users u ON u.id = s.user_id
        WHERE s.token_hash = ${hash} AND s.revoked_at IS NULL AND s.expires_at > ${now}`.pipe(
        Effect.map(first),
        Effect.orDie
      )

    /** An unrevoked org key whose maker is still a member of its org, with the maker's current role. */
    const orgKeyByHash = (hash: string) =>
      sql<OrgKeyRow>`
        SELECT k.id, k.org_id, o.plan AS org_plan, k.scope, k.created_by AS user_id, u.email, m.role
        FROM org_keys k
        JOIN orgs o ON o.id = k.org_id
        JOIN users u ON u.id = k.created_by
        JOIN org_members m ON m.org_id = k.org_id AND m.user_id = k.created_by
        WHERE k.key_hash = ${hash} AND k.revoked_at IS NULL`.pipe(Effect.map(first), Effect.orDie)

    const membership = (orgId: string, userId: string) =>
      sql<MembershipRow>`
        SELECT m.role, o.plan AS org_plan FROM org_members m JOIN orgs o ON o.id = m.org_id
        WHERE m.org_id = ${orgId} AND m.user_id = ${userId}`.pipe(Effect.map(first), Effect.orDie)

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

    return { agentByKeyHash, sessionByTokenHash, orgKeyByHash, membership, touchAgentKey, touchOrgKey } as const
  })
}) {}
