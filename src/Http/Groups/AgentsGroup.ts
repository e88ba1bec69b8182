import { HttpApiEndpoint, HttpApiGroup, OpenApi } from "@effect/platform"
import { Schema } from "effect"
import { AgentId } from "../../Domain/Ids.js"
import { InvalidInput, NotFound, PlanLimit } from "../../Errors/ApiErrors.js"
import { wire } from "../../Errors/Wire.js"
import { AgentAuth, OrgAuth } from "../Security/AuthTags.js"
import { Agent, Revoked, WholeCreditsInput } from "./IdentitySchemas.js"
import { pageLimitOrDefault } from "./Pagination.js"
import { AgentIdParam, OrgIdParam, OrgPath } from "./PathIds.js"

/** Agents and agent keys, managed by any member (session or write key). */
export const AgentName = Schema.Trim.pipe(
  Schema.minLength(1, { message: () => "An agent needs a name" }),
  Schema.maxLength(80, { message: () => "An agent name has at most 80 characters" })
)

export const AllowlistInput = Schema.Array(Schema.String).annotations({
  description: "IPv4 or IPv6 addresses and CIDR ranges; [] (default) means any address"
})

export const CreateAgent = Schema.Struct({
  name: AgentName,
  mode: Schema.optional(Schema.Literal("test", "live")),
  monthly_budget_credits: Schema.optional(WholeCreditsInput),
  approval_threshold_credits: Schema.optional(Schema.NullOr(WholeCreditsInput)),
  ip_allowlist: Schema.optional(AllowlistInput)
})

export const UpdateAgent = Schema.Struct({
  name: Schema.optional(AgentName),
  status: Schema.optional(Schema.Literal("active", "disabled")),
  monthly_budget_credits: Schema.optional(WholeCreditsInput),
  approval_threshold_credits: Schema.optional(Schema.NullOr(WholeCreditsInput)),
  ip_allowlist: Schema.optional(AllowlistInput),
  /** Present only to be refused: the mode is fixed at creation (400 `invalid_input`). */
  mode: Schema.optional(
    Schema.Literal("test", "live").annotations({ description: "Refused: the mode is fixed at creation" })
  )
})

export const AgentKey = Schema.Struct({
  key: Schema.String.annotations({ description: "The agent key (sk_test_... or sk_live_...), shown only here" }),
  key_note: Schema.String
})

const AgentPath = Schema.Struct({ orgId: OrgIdParam, agentId: AgentIdParam })

export class AgentsGroup extends HttpApiGroup.make("agents")
  .add(
    HttpApiEndpoint.post("create", "/v1/orgs/:orgId/agents")
      .annotateContext(
        OpenApi.annotations({
          summary: "Create an agent",
          description: "A new agent with its budget, approval threshold and IP allowlist; its key is shown once."
        })
      )
      .setPath(OrgPath)
      .setPayload(CreateAgent)
      .addSuccess(Schema.Struct({ agent: Agent, key: AgentKey.fields.key, key_note: Schema.String }), { status: 201 })
      .addError(wire(PlanLimit))
      .addError(wire(InvalidInput))
  )
  .add(
    HttpApiEndpoint.get("list", "/v1/orgs/:orgId/agents")
      .annotateContext(
        OpenApi.annotations({
          summary: "List agents",
          description: "The org's agents with mode, status, budget and month-to-date spend, paginated."
        })
      )
      .setPath(OrgPath)
      .setUrlParams(Schema.Struct({
        limit: pageLimitOrDefault,
        starting_after: Schema.optional(
          AgentId.annotations({ message: () => "starting_after must be the id of an agent" })
        )
      }))
      .addSuccess(Schema.Struct({ agents: Schema.Array(Agent), has_more: Schema.Boolean }))
      .addError(wire(InvalidInput))
  )
  .add(
    HttpApiEndpoint.get("get", "/v1/orgs/:orgId/agents/:agentId")
      .annotateContext(
        OpenApi.annotations({
          summary: "Get an agent",
          description: "One agent with its settings and month-to-date spend."
        })
      )
      .setPath(AgentPath)
      .addSuccess(Schema.Struct({ agent: Agent }))
  )
  .add(
    HttpApiEndpoint.patch("update", "/v1/orgs/:orgId/agents/:agentId")
      .annotateContext(
        OpenApi.annotations({
          summary: "Change an agent",
          description: "Edits name, budget, approval threshold, IP allowlist, or disables and enables it."
        })
      )
      .setPath(AgentPath)
      .setPayload(UpdateAgent)
      .addSuccess(Schema.Struct({ agent: Agent }))
      .addError(wire(PlanLimit))
      .addError(wire(InvalidInput))
  )
  .add(
    HttpApiEndpoint.post("rotateKey", "/v1/orgs/:orgId/agents/:agentId/rotate-key")
      .annotateContext(
        OpenApi.annotations({
          summary: "Rotate an agent's key",
          description: "Issues a new key (shown once); the old one stops working at once."
        })
      )
      .setPath(AgentPath)
      .addSuccess(AgentKey)
  )
  .add(
    HttpApiEndpoint.post("revokeKey", "/v1/orgs/:orgId/agents/:agentId/revoke-key")
      .annotateContext(
        OpenApi.annotations({
          summary: "Revoke an agent's key",
          description: "The key stops working at once; the agent keeps its history."
        })
      )
      .setPath(AgentPath)
      .addSuccess(Revoked)
  )
  .addError(wire(NotFound))
  .middleware(OrgAuth)
  .annotateContext(OpenApi.annotations({
    title: "Agents",
    description: "Any member: a session, or a write org key of this org (read keys: GET only)."
  }))
{}

/** The calling agent's own record. */
export class AgentSelfGroup extends HttpApiGroup.make("agentSelf")
  .add(
    HttpApiEndpoint.get("agent", "/v1/agent")
      .annotateContext(
        OpenApi.annotations({
          summary: "The calling agent",
          description: "The agent the key belongs to: mode, budget, spend and limits."
        })
      ).addSuccess(Schema.Struct({ agent: Agent }))
  )
  .middleware(AgentAuth)
  .annotateContext(OpenApi.annotations({ title: "Agent", description: "An agent key." }))
{}
