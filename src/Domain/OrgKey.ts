import { Model } from "@effect/sql"
import { Schema } from "effect"
import { OrgId, OrgKeyId, UserId } from "./Ids.js"
import { LaterTimestampColumn, TimestampColumn } from "./Timestamps.js"

/**
 * An org key, declared once: `OrgKey` decodes its row, `OrgKey.insert` is a new row (with the
 * SHA-256 of the `ok_` secret and who made it), `OrgKey.json` the wire record (timestamps ISO
 * 8601; the org, the hash and the maker's id stay off the wire).
 */
export class OrgKey extends Model.Class<OrgKey>("OrgKey")({
  id: Model.GeneratedByApp(OrgKeyId),
  org_id: Model.FieldExcept("json", "jsonCreate", "jsonUpdate")(OrgId),
  name: Schema.String,
  scope: Schema.Literal("read", "write"),
  /** The secret's first 10 characters. */
  prefix: Schema.String,
  key_hash: Model.FieldOnly("insert")(Schema.String),
  created_by: Model.FieldOnly("insert")(UserId),
  created_by_email: Schema.String,
  created_at: TimestampColumn,
  last_used_at: LaterTimestampColumn
}) {}

/** The wire's org key. */
export const OrgKeyJson = OrgKey.json.annotations({ identifier: "OrgKey", title: "OrgKey" })
