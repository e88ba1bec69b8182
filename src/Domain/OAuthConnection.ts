import { Model } from "@effect/sql"
import { Schema } from "effect"
import { AgentId, OAuthConnectionId, OrgId, UserId } from "./Ids.js"
import { LaterTimestampColumn, TimestampColumn, TimestampFromDate } from "./Timestamps.js"

/**
 * An MCP client an owner connected to an agent by OAuth: its tokens act as that agent.
 * Declared once: `OAuthConnection` decodes its row (read with the consenting owner's email,
 * `user_email`), `.insert` is a new row (one per grant, with who consented), `.json` the wire
 * record (the email as `connected_by`; the grant and the org stay off the wire).
 */
export class OAuthConnection extends Model.Class<OAuthConnection>("OAuthConnection")({
  id: Model.GeneratedByApp(OAuthConnectionId),
  grant_id: Model.FieldExcept("json", "jsonCreate", "jsonUpdate")(Schema.String),
  org_id: Model.FieldExcept("json", "jsonCreate", "jsonUpdate")(OrgId),
  agent_id: AgentId,
  client_id: Schema.String,
  client_name: Schema.NullOr(Schema.String).annotations({ description: "The name the client registered with" }),
  user_id: Model.FieldOnly("insert")(UserId),
  user_email: Model.Field({
    select: Schema.String,
    json: Schema.propertySignature(
      Schema.String.annotations({ description: "The email address of the owner who consented" })
    ).pipe(Schema.fromKey("connected_by"))
  }),
  created_at: TimestampColumn,
  last_used_at: Model.Field({
    select: Schema.NullOr(Schema.DateFromSelf),
    json: Schema.NullOr(TimestampFromDate).annotations({
      description: "When one of its tokens last reached /mcp (kept to the minute)"
    })
  }),
  revoked_at: LaterTimestampColumn
}) {}

/** The wire's connection (no title: the wire record never had one, and the class would name it `OAuthConnection.json`). */
export const OAuthConnectionJson = OAuthConnection.json.annotations({ identifier: "OAuthConnection", title: undefined })

export const OAuthConnectionList = Schema.Struct({ connections: Schema.Array(OAuthConnectionJson) })
