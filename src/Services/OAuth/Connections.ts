import { SqlClient } from "@effect/sql"
import { Effect, Option } from "effect"
import { randomUUID } from "node:crypto"
import type { AuthenticatedAgent, OrgActor } from "../../Domain/Current.js"
import { type AgentId, OAuthConnectionId } from "../../Domain/Ids.js"
import { currentDate } from "../../Domain/Timestamps.js"
import { NotFound, Unauthenticated } from "../../Errors/ApiErrors.js"
import { ExternalFailure } from "../../Errors/ExternalFailure.js"
import { Agents } from "../Agents/Agents.js"
import { Credentials } from "../Auth/Credentials.js"
import { makeUsageStamps } from "../Auth/UsageStamps.js"
import { AuthorizationServer } from "./AuthorizationServer.js"
import { ConnectionsRepo } from "./ConnectionsRepo.js"
import { OAuthRecordsRepo } from "./OAuthRecordsRepo.js"

const invalidToken = new Unauthenticated({ message: "Invalid, expired or revoked access token" })

/**
 * The connections between MCP clients and agents: made when an owner consents (one per
 * grant), read on every `/mcp` request that carries an access token, listed and revoked on
 * the agent's page. A token acts exactly as its connection's agent, read afresh each time
 * (mode, budget, threshold, allowlist), so it is never more than the agent; a revoked
 * connection's grant, with every code and token of it, is deleted in the same transaction.
 */
export class Connections extends Effect.Service<Connections>()("OAuth/Connections", {
  dependencies: [ConnectionsRepo.Default, OAuthRecordsRepo.Default],
  effect: Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const repo = yield* ConnectionsRepo
    const records = yield* OAuthRecordsRepo
    const server = yield* AuthorizationServer
    const credentials = yield* Credentials
    const agents = yield* Agents

    // Last use is kept to the minute: this replica writes it at most once a minute per grant.
    const stamps = yield* makeUsageStamps
    const stampOnce = (grantId: string) =>
      Effect.flatMap(
        stamps.due(grantId),
        (due) => due ? Effect.flatMap(currentDate, (at) => repo.touch(grantId, at)) : Effect.void
      )

    /** The agent an access token acts as, for a caller at `address`; 401 for any token that does not work. */
    const agentForAccessToken = (token: string, address: string) =>
      Effect.gen(function*() {
        const accessToken = yield* Effect.tryPromise({
          try: () => server.provider.AccessToken.find(token),
          catch: (cause) => new ExternalFailure({ what: "oidc-provider AccessToken.find", cause })
        }).pipe(Effect.orDie)
        if (accessToken === undefined || accessToken.grantId === undefined) return yield* invalidToken
        // Bound to /mcp: a token issued for another audience is not ours to accept.
        const audiences = Array.isArray(accessToken.aud) ? accessToken.aud : [accessToken.aud]
        if (!audiences.includes(server.resource)) return yield* invalidToken
        const connection = yield* repo.byGrant(accessToken.grantId)
        if (Option.isNone(connection) || connection.value.revoked_at !== null) return yield* invalidToken
        const agent: AuthenticatedAgent = yield* credentials.authenticateAgentById(connection.value.agent_id, address)
        yield* stampOnce(connection.value.grant_id)
        return agent
      })

    /** Records the agent a new grant acts as (the consent step, once the owner chose). */
    const connect = (input: {
      readonly grantId: string
      readonly clientId: string
      readonly clientName: string | null
      readonly actor: OrgActor
      readonly agentId: AgentId
    }) =>
      Effect.flatMap(currentDate, (at) =>
        repo.insert({
          id: OAuthConnectionId.make(randomUUID()),
          grant_id: input.grantId,
          org_id: input.actor.org_id,
          agent_id: input.agentId,
          client_id: input.clientId,
          client_name: input.clientName,
          user_id: input.actor.user_id,
          created_at: at
        }))

    /** The agent's connected clients, newest first (revoked ones too, with when). */
    const list = (actor: OrgActor, agentId: AgentId) =>
      Effect.gen(function*() {
        yield* agents.get(actor, agentId)
        return yield* repo.ofAgent(actor.org_id, agentId)
      })

    /** Ends a connection: its grant and every token of it stop working at once. */
    const revoke = (actor: OrgActor, agentId: AgentId, connectionId: OAuthConnectionId) =>
      Effect.gen(function*() {
        yield* agents.get(actor, agentId)
        const noSuchConnection = new NotFound({ message: "No such connection" })
        yield* sql.withTransaction(Effect.gen(function*() {
          const at = yield* currentDate
          const revoked = yield* repo.revoke(actor.org_id, agentId, connectionId, at)
          if (Option.isNone(revoked)) return yield* noSuchConnection
          yield* records.destroyGrant(revoked.value.grant_id, at)
        })).pipe(Effect.catchTag("SqlError", Effect.die))
      })

    return { agentForAccessToken, connect, list, revoke } as const
  })
}) {}
