import { HttpApiBuilder } from "@effect/platform"
import { Effect } from "effect"
import { CurrentActor } from "../../Domain/Current.js"
import { Connections } from "../../Services/OAuth/Connections.js"
import { Api } from "../Api.js"

export const AgentConnectionsHandlers = HttpApiBuilder.group(
  Api,
  "agentConnections",
  (handlers) =>
    Effect.gen(function*() {
      const connections = yield* Connections
      return handlers
        .handle(
          "list",
          ({ path }) =>
            Effect.flatMap(CurrentActor, (actor) =>
              Effect.map(connections.list(actor, path.agentId), (list) => ({ connections: list })))
        )
        .handle(
          "revoke",
          ({ path }) =>
            Effect.flatMap(CurrentActor, (actor) =>
              Effect.as(connections.revoke(actor, path.agentId, path.connectionId), { status: "revoked" as const }))
        )
    })
)
