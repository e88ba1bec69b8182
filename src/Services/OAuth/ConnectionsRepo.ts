import { SqlClient, SqlSchema } from "@effect/sql"
import { Effect, Schema, Struct } from "effect"
import { AgentId, OAuthConnectionId, OrgId } from "../../Domain/Ids.js"
import { OAuthConnection } from "../../Domain/OAuthConnection.js"

/**
 * Which agent each consented grant acts as, with its client and last use: rows decode to the
 * `OAuthConnection` model (with the consenting owner's email), new rows encode from its insert.
 */
const columns = "c.id, c.grant_id, c.org_id, c.agent_id, c.client_id, c.client_name, u.email AS user_email, " +
  "c.created_at, c.last_used_at, c.revoked_at"

const GrantOf = Schema.Struct(Struct.pick(OAuthConnection.fields, "grant_id"))

export class ConnectionsRepo extends Effect.Service<ConnectionsRepo>()("OAuth/ConnectionsRepo", {
  effect: Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient

    /** One connection per grant: a second write for the same grant changes nothing. */
    const insertRow = SqlSchema.void({
      Request: OAuthConnection.insert,
      execute: (row) => sql`INSERT INTO oauth_connections ${sql.insert(row)} ON CONFLICT (grant_id) DO NOTHING`
    })
    const insert = (connection: typeof OAuthConnection.insert.Type) => insertRow(connection).pipe(Effect.orDie)

    const findByGrant = SqlSchema.findOne({
      Request: Schema.String,
      Result: OAuthConnection,
      execute: (grantId) =>
        sql`
          SELECT ${sql.unsafe(columns)} FROM oauth_connections c JOIN users u ON u.id = c.user_id
          WHERE c.grant_id = ${grantId}`
    })
    const byGrant = (grantId: string) => findByGrant(grantId).pipe(Effect.orDie)

    const findOfAgent = SqlSchema.findAll({
      Request: Schema.Struct({ orgId: OrgId, agentId: AgentId }),
      Result: OAuthConnection,
      execute: ({ agentId, orgId }) =>
        sql`
          SELECT ${sql.unsafe(columns)} FROM oauth_connections c JOIN users u ON u.id = c.user_id
          WHERE c.org_id = ${orgId} AND c.agent_id = ${agentId}
          ORDER BY c.created_at DESC, c.id DESC LIMIT 200`
    })
    const ofAgent = (orgId: OrgId, agentId: AgentId) => findOfAgent({ orgId, agentId }).pipe(Effect.orDie)

    const revokeLive = SqlSchema.findOne({
      Request: Schema.Struct({
        orgId: OrgId,
        agentId: AgentId,
        id: OAuthConnectionId,
        now: Schema.DateFromSelf
      }),
      Result: GrantOf,
      execute: ({ agentId, id, now, orgId }) =>
        sql`
          UPDATE oauth_connections SET revoked_at = ${now}
          WHERE id = ${id} AND org_id = ${orgId} AND agent_id = ${agentId} AND revoked_at IS NULL
          RETURNING grant_id`
    })
    /** Marks the connection revoked (once); answers its grant, or nothing when it was not live. */
    const revoke = (orgId: OrgId, agentId: AgentId, id: OAuthConnectionId, now: Date) =>
      revokeLive({ orgId, agentId, id, now }).pipe(Effect.orDie)

    /** Last use, written at most once a minute per connection. */
    const touch = (grantId: string, now: Date) =>
      sql`
        UPDATE oauth_connections SET last_used_at = ${now}
        WHERE grant_id = ${grantId} AND (last_used_at IS NULL OR last_used_at < ${new Date(now.getTime() - 60_000)})`
        .pipe(Effect.asVoid, Effect.orDie)

    return { insert, byGrant, ofAgent, revoke, touch } as const
  })
}) {}
