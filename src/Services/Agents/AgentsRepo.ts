import { Model, SqlClient, SqlSchema } from "@effect/sql"
import { Effect, Schema } from "effect"
import { Agent } from "../../Domain/Agent.js"
import { AgentId, OrgId } from "../../Domain/Ids.js"

/**
 * Agents and their keys (stored as SHA-256 hash and 12-character prefix), read and written
 * through the `Agent` model: rows decode to it, inserts and updates encode from its variants.
 */
const OrgAgent = Schema.Struct({ orgId: OrgId, agentId: AgentId })

/** Whose key a hash is (or was). */
export const KeyOwner = Schema.Struct({ agent_id: AgentId, org_id: OrgId })
export type KeyOwner = typeof KeyOwner.Type

export class AgentsRepo extends Effect.Service<AgentsRepo>()("Agents/AgentsRepo", {
  effect: Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const rows = yield* Model.makeRepository(Agent, { tableName: "agents", spanPrefix: "AgentsRepo", idColumn: "id" })

    const countActive = SqlSchema.single({
      Request: OrgId,
      Result: Schema.Struct({ n: Schema.NumberFromString }),
      execute: (orgId) => sql`SELECT count(*) AS n FROM agents WHERE org_id = ${orgId} AND status = 'active'`
    })

    const listPage = SqlSchema.findAll({
      Request: Schema.Struct({ orgId: OrgId, limit: Schema.Number, startingAfter: Schema.UndefinedOr(AgentId) }),
      Result: Agent,
      execute: ({ limit, orgId, startingAfter }) =>
        startingAfter === undefined
          ? sql`SELECT * FROM agents WHERE org_id = ${orgId}
              ORDER BY created_at DESC, id DESC LIMIT ${limit}`
          : sql`SELECT * FROM agents WHERE org_id = ${orgId}
              AND (created_at, id) < (SELECT created_at, id FROM agents WHERE id = ${startingAfter} AND org_id = ${orgId})
              ORDER BY created_at DESC, id DESC LIMIT ${limit}`
    })

    const findOne = SqlSchema.findOne({
      Request: Schema.Struct({ ...OrgAgent.fields, lock: Schema.Boolean }),
      Result: Agent,
      execute: ({ agentId, lock, orgId }) =>
        sql`SELECT * FROM agents WHERE id = ${agentId} AND org_id = ${orgId} ${lock ? sql`FOR UPDATE` : sql``}`
    })

    const count = (orgId: OrgId) => countActive(orgId).pipe(Effect.map((row) => row.n), Effect.orDie)
    /** Newest first; `startingAfter` is the id of the last agent of the previous page. */
    const list = (orgId: OrgId, limit: number, startingAfter: AgentId | undefined) =>
      listPage({ orgId, limit, startingAfter }).pipe(Effect.orDie)
    const find = (orgId: OrgId, agentId: AgentId) => findOne({ orgId, agentId, lock: false }).pipe(Effect.orDie)
    const findForUpdate = (orgId: OrgId, agentId: AgentId) => findOne({ orgId, agentId, lock: true }).pipe(Effect.orDie)

    /**
     * Replaces the key (the old hash no longer authenticates) or, with null, removes it. The
     * old hash is kept as retired, naming its agent, so a request still sending it is counted
     * as that agent's refusal.
     */
    const setKey = (agentId: AgentId, key: { hash: string; prefix: string } | null, now: Date) =>
      sql`
        WITH retired AS (
          INSERT INTO agent_retired_keys (key_hash, agent_id, org_id, retired_at)
          SELECT key_hash, id, org_id, ${now} FROM agents WHERE id = ${agentId} AND key_hash IS NOT NULL
          ON CONFLICT (key_hash) DO NOTHING
        )
        UPDATE agents SET key_hash = ${key?.hash ?? null}, key_prefix = ${key?.prefix ?? null},
          key_issued_at = ${key === null ? null : now}
        WHERE id = ${agentId}`.pipe(Effect.asVoid, Effect.orDie)

    const findKeyOwner = SqlSchema.findOne({
      Request: Schema.String,
      Result: KeyOwner,
      execute: (hash) =>
        sql`
        SELECT id AS agent_id, org_id FROM agents WHERE key_hash = ${hash}
        UNION ALL
        SELECT agent_id, org_id FROM agent_retired_keys WHERE key_hash = ${hash}
        LIMIT 1`
    })
    /** The agent a key (by its hash) belongs or belonged to: current, rotated or revoked. */
    const keyOwner = (hash: string) => findKeyOwner(hash).pipe(Effect.orDie)

    return {
      insert: rows.insert,
      update: rows.update,
      byId: rows.findById,
      countActive: count,
      list,
      find,
      findForUpdate,
      setKey,
      keyOwner
    } as const
  })
}) {}
