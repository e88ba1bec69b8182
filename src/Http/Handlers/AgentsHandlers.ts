import { HttpApiBuilder } from "@effect/platform"
import { Effect } from "effect"
import { CurrentActor, CurrentAgent } from "../../Domain/Current.js"
import { InvalidInput } from "../../Errors/ApiErrors.js"
import { Agents } from "../../Services/Agents/Agents.js"
import { Api } from "../Api.js"

export const AgentsHandlers = HttpApiBuilder.group(Api, "agents", (handlers) =>
  Effect.gen(function*() {
    const agents = yield* Agents
    return handlers
      .handle("create", ({ payload }) =>
        Effect.flatMap(CurrentActor, (actor) =>
          agents.create(actor, {
            name: payload.name,
            mode: payload.mode,
            monthlyBudgetCredits: payload.monthly_budget_credits,
            approvalThresholdCredits: payload.approval_threshold_credits,
            ipAllowlist: payload.ip_allowlist
          })))
      .handle("list", ({ urlParams }) =>
        Effect.flatMap(CurrentActor, (actor) =>
          agents.list(actor, urlParams.limit, urlParams.starting_after)))
      .handle("get", ({ path }) =>
        Effect.flatMap(CurrentActor, (actor) =>
          Effect.map(agents.get(actor, path.agentId), (agent) => ({ agent }))))
      .handle("update", ({ path, payload }) =>
        Effect.gen(function*() {
          const actor = yield* CurrentActor
          if (payload.mode !== undefined) {
            return yield* new InvalidInput({ message: "mode is fixed at creation; create another agent instead" })
          }
          const agent = yield* agents.update(actor, path.agentId, {
            name: payload.name,
            status: payload.status,
            monthlyBudgetCredits: payload.monthly_budget_credits,
            approvalThresholdCredits: payload.approval_threshold_credits,
            ipAllowlist: payload.ip_allowlist
          })
          return { agent }
        }))
      .handle("rotateKey", ({ path }) =>
        Effect.flatMap(CurrentActor, (actor) =>
          agents.rotateKey(actor, path.agentId)))
      .handle("revokeKey", ({ path }) =>
        Effect.flatMap(CurrentActor, (actor) => agents.revokeKey(actor, path.agentId)))
  }))

export const AgentSelfHandlers = HttpApiBuilder.group(Api, "agentSelf", (handlers) =>
  Effect.gen(function*() {
    const agents = yield* Agents
    return handlers.handle("agent", () =>
      Effect.flatMap(CurrentAgent, (current) =>
        Effect.map(agents.self(current.id), (agent) => ({ agent })).pipe(Effect.orDie)))
  }))
