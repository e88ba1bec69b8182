import { Model } from "@effect/sql"
import { Schema, Struct } from "effect"
import { InviteId, OrgId, UserId } from "./Ids.js"
import { PlanId } from "./Plans.js"
import { TimestampColumn, TimestampFromDate } from "./Timestamps.js"

/** A person's role in an org. */
export const Role = Schema.Literal("owner", "member").annotations({ identifier: "Role" })

/**
 * An org, declared once: `Org` decodes its row (the columns the org's own pages show; the
 * ledger's and billing's columns are theirs), `Org.insert` is a new org (its plan starts as
 * the column's default, the trial). The wire's org adds the caller's role: `OrgJson`.
 */
export class Org extends Model.Class<Org>("Org")({
  id: Model.GeneratedByApp(OrgId),
  name: Schema.String,
  plan: Model.FieldExcept("insert", "jsonCreate")(PlanId),
  created_at: TimestampColumn
}) {}

/** The wire's org: the record with the caller's role in it. */
export const OrgJson = Schema.Struct({
  ...Struct.pick(Org.json.fields, "id", "name", "plan"),
  role: Role,
  created_at: Org.json.fields.created_at
}).annotations({ identifier: "Org" })
export type OrgJson = typeof OrgJson.Type

/**
 * A member of an org as read with the person's account (`org_members` joined with `users`):
 * `Member` decodes the row, `.json` is the wire record. Memberships are written by
 * statements of their own (`OrgsRepo`).
 */
export class Member extends Model.Class<Member>("Member")({
  user_id: UserId,
  email: Schema.String,
  name: Schema.NullOr(Schema.String),
  role: Role,
  /** The membership's `created_at`. */
  joined_at: Model.Field({ select: Schema.DateFromSelf, json: TimestampFromDate })
}) {}

/** The wire's member. */
export const MemberJson = Member.json.annotations({ identifier: "Member", title: undefined })

/**
 * An invitation, declared once: `Invite` decodes its row, `Invite.insert` is a new one (with
 * the SHA-256 of its token and who invited), `Invite.json` the wire record (the org, the hash
 * and the inviter's id stay off the wire).
 */
export class Invite extends Model.Class<Invite>("Invite")({
  id: Model.GeneratedByApp(InviteId),
  org_id: Model.FieldExcept("json", "jsonCreate", "jsonUpdate")(OrgId),
  email: Schema.String,
  role: Role,
  token_hash: Model.FieldOnly("insert")(Schema.String),
  invited_by: Model.FieldOnly("insert")(UserId),
  invited_by_email: Schema.String,
  created_at: TimestampColumn,
  expires_at: TimestampColumn
}) {}

/** The wire's invitation. */
export const InviteJson = Invite.json.annotations({ identifier: "Invite", title: undefined })
