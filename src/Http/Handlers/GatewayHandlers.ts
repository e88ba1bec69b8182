import { HttpApiBuilder } from "@effect/platform"
import { Effect } from "effect"
import { CurrentActor, CurrentAgent } from "../../Domain/Current.js"
import { AgentBalance } from "../../Services/Gateway/AgentBalance.js"
import { CallLog } from "../../Services/Gateway/CallLog.js"
import { Gateway } from "../../Services/Gateway/Gateway.js"
import { Api } from "../Api.js"

/** `POST /v1/call` and `GET /v1/balance` for agent keys. */
export const GatewayHandlers = HttpApiBuilder.group(Api, "gateway", (handlers) =>
  Effect.gen(function*() {
    const gateway = yield* Gateway
    const balance = yield* AgentBalance
    return handlers
      .handle("call", ({ payload }) => Effect.flatMap(CurrentAgent, (agent) => gateway.call(agent, payload)))
      .handle("balance", () => Effect.flatMap(CurrentAgent, balance.of))
  }))

/** `GET /v1/orgs/{orgId}/calls` for members (session or org key). */
export const GatewayCallsHandlers = HttpApiBuilder.group(Api, "gatewayCalls", (handlers) =>
  Effect.gen(function*() {
    const log = yield* CallLog
    return handlers.handle("list", ({ urlParams }) =>
      Effect.flatMap(CurrentActor, (actor) =>
        log.list(actor.org_id, urlParams.limit, urlParams.starting_after, {
          agentId: urlParams.agent_id,
          status: urlParams.status,
          endpoint: urlParams.endpoint,
          endpointContains: urlParams.endpoint_contains,
          from: urlParams.from,
          until: urlParams.until
        })))
  }))

/** `GET /v1/providers`: public. */
export const GatewayProvidersHandlers = HttpApiBuilder.group(
  Api,
  "gatewayProviders",
  (handlers) =>
    Effect.gen(function*() {
      const log = yield* CallLog
      return handlers.handle("list", () => log.providers)
    })
)
