import { SqlClient } from "@effect/sql"
import { Effect, Option } from "effect"

/** SQL for agents and their keys (stored as SHA-256 hash and 12-character prefix). */
export interface AgentRow {
  readonly id: string
  readonly org_id: string
  readonly name: string
  readonly mode: "test" | "live"
  readonly status: "active" | "disabled"
  readonly monthly_budget_credits: string
  readonly approval_threshold_credits: string | null
  readonly ip_allowlist: ReadonlyArray<string>
  readonly key_prefix: string | null
  readonly key_last_used_at: Date | null
  readonly created_at: Date
}

export interface NewAgent {
  readonly id: string
  readonly orgId: string
  readonly name: string
  readonly mode: "test" | "live"
  readonly monthlyBudgetCredits: bigint
  readonly approvalThresholdCredits: bigint | null
  readonly ipAllowlist: ReadonlyArray<string>
  readonly keyHash: string
  readonly keyPrefix: string
  readonly createdAt: Date
}

export interface AgentChanges {
  readonly name?: string | undefined
  readonly status?: "active" | "disabled" | undefined
  readonly monthlyBudgetCredits?: bigint | undefined
  /** undefined: unchanged; null: never ask. */
  readonly approvalThresholdCredits?: bigint | null | undefined
  readonly ipAllowlist?: ReadonlyArray<string> | undefined
}

const first = <A>(rows: ReadonlyArray<A>) => Option.fromNullable(rows[0])

export class AgentsRepo extends Effect.Service<AgentsRepo>()("Agents/AgentsRepo", {
  effect: Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const columns = sql`id, org_id, name, mode, status, monthly_budget_credits, approval_threshold_credits,
      ip_allowlist, key_prefix, key_last_used_at, created_at`

    const insert = (agent: NewAgent) =>
      sql<AgentRow>`
        INSERT INTO agents (id, org_id, name, mode, status, monthly_budget_credits, approval_threshold_credits,
                            ip_allowlist, key_hash, key_prefix, key_issued_at, created_at)
        VALUES (${agent.id}, ${agent.orgId}, ${agent.name}, ${agent.mode}, 'active', ${agent.monthlyBudgetCredits.toString()},
                ${agent.approvalThresholdCredits === null ? null : agent.approvalThresholdCredits.toString()},
                ${JSON.stringify(agent.ipAllowlist)}::jsonb, ${agent.keyHash}, ${agent.keyPrefix}, ${agent.createdAt},
                ${agent.createdAt})
        RETURNING ${columns}`.pipe(Effect.map((rows) => rows[0]!), Effect.orDie)

    const countActive = (orgId: string) =>
      sql<{ n: string }>`SELECT count(*) AS n FROM agents WHERE org_id = ${orgId} AND status = 'active'`.pipe(
        Effect.map((rows) => Number(rows[0]!.n)),
        Effect.orDie
      )

    /** Newest first; `startingAfter` is the id of the last agent of the previous page. */
    const list = (orgId: string, limit: number, startingAfter: string | undefined) =>
      (startingAfter === undefined
        ? sql<AgentRow>`SELECT ${columns} FROM agents WHERE org_id = ${orgId}
            ORDER BY created_at DESC, id DESC LIMIT ${limit}`
        : sql<AgentRow>`SELECT ${columns} FROM agents WHERE org_id = ${orgId}
            AND (created_at, id) < (SELECT created_at, id FROM agents WHERE id = ${startingAfter} AND org_id = ${orgId})
            ORDER BY created_at DESC, id DESC LIMIT ${limit}`).pipe(Effect.orDie)

    const find = (orgId: string, agentId: string) =>
      sql<AgentRow>`SELECT ${columns} FROM agents WHERE id = ${agentId} AND org_id = ${orgId}`.pipe(
        Effect.map(first),
        Effect.orDie
      )

    const findForUpdate = (orgId: string, agentId: string) =>
      sql<AgentRow>`SELECT ${columns} FROM agents WHERE id = ${agentId} AND org_id = ${orgId} FOR UPDATE`.pipe(
        Effect.map(first),
        Effect.orDie
      )

    const byId = (agentId: string) =>
      sql<AgentRow>`SELECT ${columns} FROM agents WHERE id = ${agentId}`.pipe(Effect.map(first), Effect.orDie)

    const update = (agentId: string, changes: AgentChanges) => {
      const sets = [
        changes.name === undefined ? undefined : sql`name = ${changes.name}`,
        changes.status === undefined ? undefined : sql`status = ${changes.status}`,
        changes.monthlyBudgetCredits === undefined
          ? undefined
          : sql`monthly_budget_credits = ${changes.monthlyBudgetCredits.toString()}`,
        changes.approvalThresholdCredits === undefined
          ? undefined
          : sql`approval_threshold_credits = ${
            changes.approvalThresholdCredits === null ? null : changes.approvalThresholdCredits.toString()
          }`,
        changes.ipAllowlist === undefined
          ? undefined
          : sql`ip_allowlist = ${JSON.stringify(changes.ipAllowlist)}::jsonb`
      ].filter((set) => set !== undefined)
      if (sets.length === 0) return Effect.flatMap(byId(agentId), (row) => Effect.succeed(Option.getOrThrow(row)))
      return sql<AgentRow>`UPDATE agents SET ${sql.csv(sets)} WHERE id = ${agentId} RETURNING ${columns}`.pipe(
        Effect.map((rows) => rows[0]!),
        Effect.orDie
      )
    }

    /** Replaces the key (the old hash no longer matches anything) or, with null, removes it. */
    const setKey = (agentId: string, key: { hash: string; prefix: string } | null, now: Date) =>
      sql`UPDATE agents SET key_hash = ${key?.hash ?? null}, key_prefix = ${key?.prefix ?? null},
            key_issued_at = ${key === null ? null : now}
          WHERE id = ${agentId}`.pipe(Effect.asVoid, Effect.orDie)

    return { insert, countActive, list, find, findForUpdate, byId, update, setKey } as const
  })
}) {}
