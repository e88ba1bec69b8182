import { HttpApiEndpoint, HttpApiGroup, OpenApi } from "@effect/platform"
import { Schema } from "effect"
import { OAuthConnectionList } from "../../Domain/OAuthConnection.js"
import { NotFound } from "../../Errors/ApiErrors.js"
import { wire } from "../../Errors/Wire.js"
import { OrgAuth } from "../Security/AuthTags.js"
import { Revoked } from "./IdentitySchemas.js"
import { AgentIdParam, OAuthConnectionIdParam, OrgIdParam } from "./PathIds.js"

const AgentPath = Schema.Struct({ orgId: OrgIdParam, agentId: AgentIdParam })
const ConnectionPath = Schema.Struct({ ...AgentPath.fields, connectionId: OAuthConnectionIdParam })

/** The MCP clients connected to an agent by OAuth (an owner's consent), and their revocation. */
export class AgentConnectionsGroup extends HttpApiGroup.make("agentConnections")
  .add(
    HttpApiEndpoint.get("list", "/v1/orgs/:orgId/agents/:agentId/connections")
      .annotateContext(
        OpenApi.annotations({
          summary: "List an agent's connected MCP clients",
          description:
            "The MCP clients an owner connected to this agent by OAuth, newest first, with who consented, when they last reached /mcp, and when they were revoked."
        })
      )
      .setPath(AgentPath)
      .addSuccess(OAuthConnectionList)
  )
  .add(
    HttpApiEndpoint.post("revoke", "/v1/orgs/:orgId/agents/:agentId/connections/:connectionId/revoke")
      .annotateContext(
        OpenApi.annotations({
          summary: "Disconnect an MCP client",
          description: "Revokes the client's grant: its access and refresh tokens stop working at once."
        })
      )
      .setPath(ConnectionPath)
      .addSuccess(Revoked)
  )
  .addError(wire(NotFound))
  .middleware(OrgAuth)
  .annotateContext(OpenApi.annotations({
    title: "Connected MCP clients",
    description: "Any member: a session, or a write org key of this org (read keys: GET only)."
  }))
{}
