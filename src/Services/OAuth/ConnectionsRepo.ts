import { SqlClient, SqlSchema } from "@effect/sql"
import { Effect, Schema } from "effect"

/** Which agent each consented grant acts as, with its client and last use. */
export const ConnectionRow = Schema.Struct({
  id: Schema.String,
  grant_id: Schema.String,
  client_id: Schema.String,
  client_name: Schema.NullOr(Schema.String),
  org_id: Schema.String,
  agent_id: Schema.String,
  user_email: Schema.String,
  created_at: Schema.DateFromSelf,
  last_used_at: Schema.NullOr(Schema.DateFromSelf),
  revoked_at: Schema.NullOr(Schema.DateFromSelf)
})
export type ConnectionRow = typeof ConnectionRow.Type

const columns = "c.id, c.grant_id, c.client_id, c.client_name, c.org_id, c.agent_id, u.email AS user_email, " +
  "c.created_at, c.last_used_at, c.revoked_at"

export class ConnectionsRepo extends Effect.Service<ConnectionsRepo>()("OAuth/ConnectionsRepo", {
  effect: Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient

    const insert = (connection: {
      readonly id: string
      readonly grantId: string
      readonly clientId: string
      readonly clientName: string | null
      readonly orgId: string
      readonly agentId: string
      readonly userId: string
      readonly now: Date
    }) =>
      sql`
        INSERT INTO oauth_connections (id, grant_id, client_id, client_name, org_id, agent_id, user_id, created_at)
        VALUES (${connection.id}, ${connection.grantId}, ${connection.clientId}, ${connection.clientName},
                ${connection.orgId}, ${connection.agentId}, ${connection.userId}, ${connection.now})
        ON CONFLICT (grant_id) DO NOTHING`.pipe(Effect.asVoid, Effect.orDie)

    const findByGrant = SqlSchema.findOne({
      Request: Schema.String,
      Result: ConnectionRow,
      execute: (grantId) =>
        sql`
          SELECT ${sql.unsafe(columns)} FROM oauth_connections c JOIN users u ON u.id = c.user_id
          WHERE c.grant_id = ${grantId}`
    })
    const byGrant = (grantId: string) => findByGrant(grantId).pipe(Effect.orDie)

    const findOfAgent = SqlSchema.findAll({
      Request: Schema.Struct({ orgId: Schema.String, agentId: Schema.String }),
      Result: ConnectionRow,
      execute: ({ agentId, orgId }) =>
        sql`
          SELECT ${sql.unsafe(columns)} FROM oauth_connections c JOIN users u ON u.id = c.user_id
          WHERE c.org_id = ${orgId} AND c.agent_id = ${agentId}
          ORDER BY c.created_at DESC, c.id DESC LIMIT 200`
    })
    const ofAgent = (orgId: string, agentId: string) => findOfAgent({ orgId, agentId }).pipe(Effect.orDie)

    /** Marks the connection revoked (once); answers its grant, or nothing when it was not live. */
    const revoke = (orgId: string, agentId: string, id: string, now: Date) =>
      SqlSchema.findOne({
        Request: Schema.Void,
        Result: Schema.Struct({ grant_id: Schema.String }),
        execute: () =>
          sql`
            UPDATE oauth_connections SET revoked_at = ${now}
            WHERE id = ${id} AND org_id = ${orgId} AND agent_id = ${agentId} AND revoked_at IS NULL
            RETURNING grant_id`
      })(undefined).pipe(Effect.orDie)

    /** Last use, written at most once a minute per connection. */
    const touch = (grantId: string, now: Date) =>
      sql`
        UPDATE oauth_connections SET last_used_at = ${now}
        WHERE grant_id = ${grantId} AND (last_used_at IS NULL OR last_used_at < ${new Date(now.getTime() - 60_000)})`
        .pipe(Effect.asVoid, Effect.orDie)

    return { insert, byGrant, ofAgent, revoke, touch } as const
  })
}) {}
