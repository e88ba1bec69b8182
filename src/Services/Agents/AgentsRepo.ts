import { SqlClient, SqlSchema } from "@effect/sql"
import { Effect, Option, Schema } from "effect"
import { AgentRecord } from "../../Domain/Agent.js"
import { statementRows } from "../StatementRows.js"

/**
 * SQL for agents and their keys (stored as SHA-256 hash and 12-character prefix). Rows are
 * decoded by `AgentRow`: credits as bigint, timestamps as Dates.
 */
export const AgentRow = Schema.Struct({
  ...AgentRecord.fields,
  key_prefix: Schema.NullOr(Schema.String),
  key_last_used_at: Schema.NullOr(Schema.DateFromSelf),
  created_at: Schema.DateFromSelf
})
export type AgentRow = typeof AgentRow.Type

const OrgAgent = Schema.Struct({ orgId: Schema.String, agentId: Schema.String })

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

export class AgentsRepo extends Effect.Service<AgentsRepo>()("Agents/AgentsRepo", {
  effect: Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const agentRows = statementRows(AgentRow)
    const columns = sql`id, org_id, name, mode, status, monthly_budget_credits, approval_threshold_credits,
      ip_allowlist, key_prefix, key_last_used_at, created_at`

    const insert = (agent: NewAgent) =>
      agentRows.single(sql`
            INSERT INTO agents (id, org_id, name, mode, status, monthly_budget_credits, approval_threshold_credits,
                                ip_allowlist, key_hash, key_prefix, key_issued_at, created_at)
            VALUES (${agent.id}, ${agent.orgId}, ${agent.name}, ${agent.mode}, 'active',
                    ${agent.monthlyBudgetCredits.toString()},
                    ${agent.approvalThresholdCredits === null ? null : agent.approvalThresholdCredits.toString()},
                    ${
        JSON.stringify(agent.ipAllowlist)
      }::jsonb, ${agent.keyHash}, ${agent.keyPrefix}, ${agent.createdAt},
                    ${agent.createdAt})
            RETURNING ${columns}`).pipe(Effect.orDie)

    const countActive = SqlSchema.single({
      Request: Schema.String,
      Result: Schema.Struct({ n: Schema.NumberFromString }),
      execute: (orgId) => sql`SELECT count(*) AS n FROM agents WHERE org_id = ${orgId} AND status = 'active'`
    })

    const listPage = SqlSchema.findAll({
      Request: Schema.Struct({
        orgId: Schema.String,
        limit: Schema.Number,
        startingAfter: Schema.UndefinedOr(Schema.String)
      }),
      Result: AgentRow,
      execute: ({ limit, orgId, startingAfter }) =>
        startingAfter === undefined
          ? sql`SELECT ${columns} FROM agents WHERE org_id = ${orgId}
              ORDER BY created_at DESC, id DESC LIMIT ${limit}`
          : sql`SELECT ${columns} FROM agents WHERE org_id = ${orgId}
              AND (created_at, id) < (SELECT created_at, id FROM agents WHERE id = ${startingAfter} AND org_id = ${orgId})
              ORDER BY created_at DESC, id DESC LIMIT ${limit}`
    })

    const findOne = SqlSchema.findOne({
      Request: OrgAgent,
      Result: AgentRow,
      execute: ({ agentId, orgId }) => sql`SELECT ${columns} FROM agents WHERE id = ${agentId} AND org_id = ${orgId}`
    })

    const findOneForUpdate = SqlSchema.findOne({
      Request: OrgAgent,
      Result: AgentRow,
      execute: ({ agentId, orgId }) =>
        sql`SELECT ${columns} FROM agents WHERE id = ${agentId} AND org_id = ${orgId} FOR UPDATE`
    })

    const findById = SqlSchema.findOne({
      Request: Schema.String,
      Result: AgentRow,
      execute: (agentId) => sql`SELECT ${columns} FROM agents WHERE id = ${agentId}`
    })

    const count = (orgId: string) => countActive(orgId).pipe(Effect.map((row) => row.n), Effect.orDie)
    /** Newest first; `startingAfter` is the id of the last agent of the previous page. */
    const list = (orgId: string, limit: number, startingAfter: string | undefined) =>
      listPage({ orgId, limit, startingAfter }).pipe(Effect.orDie)
    const find = (orgId: string, agentId: string) => findOne({ orgId, agentId }).pipe(Effect.orDie)
    const findForUpdate = (orgId: string, agentId: string) => findOneForUpdate({ orgId, agentId }).pipe(Effect.orDie)
    const byId = (agentId: string) => findById(agentId).pipe(Effect.orDie)

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
      if (sets.length === 0) return Effect.map(byId(agentId), Option.getOrThrow)
      return agentRows.single(sql`UPDATE agents SET ${sql.csv(sets)} WHERE id = ${agentId} RETURNING ${columns}`).pipe(
        Effect.orDie
      )
    }

    /** Replaces the key (the old hash no longer matches anything) or, with null, removes it. */
    const setKey = (agentId: string, key: { hash: string; prefix: string } | null, now: Date) =>
      sql`UPDATE agents SET key_hash = ${key?.hash ?? null}, key_prefix = ${key?.prefix ?? null},
            key_issued_at = ${key === null ? null : now}
          WHERE id = ${agentId}`.pipe(Effect.asVoid, Effect.orDie)

    return { insert, countActive: count, list, find, findForUpdate, byId, update, setKey } as const
  })
}) {}
