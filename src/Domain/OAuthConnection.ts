import { Schema } from "effect"

/** An MCP client an owner connected to an agent by OAuth: its tokens act as that agent. */
export const OAuthConnection = Schema.Struct({
  id: Schema.String,
  agent_id: Schema.String,
  client_id: Schema.String,
  client_name: Schema.NullOr(Schema.String).annotations({ description: "The name the client registered with" }),
  connected_by: Schema.String.annotations({ description: "The email address of the owner who consented" }),
  created_at: Schema.String,
  last_used_at: Schema.NullOr(Schema.String).annotations({
    description: "When one of its tokens last reached /mcp (kept to the minute)"
  }),
  revoked_at: Schema.NullOr(Schema.String)
}).annotations({ identifier: "OAuthConnection" })
export type OAuthConnection = typeof OAuthConnection.Type

export const OAuthConnectionList = Schema.Struct({ connections: Schema.Array(OAuthConnection) })
