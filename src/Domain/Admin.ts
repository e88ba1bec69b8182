import { Model } from "@effect/sql"
import { Schema } from "effect"
import { AdminId } from "./Ids.js"

const hidden = Model.FieldExcept("json", "jsonCreate", "jsonUpdate")

/**
 * An administrator, declared once: `Admin` decodes its row (read to check a sign-in),
 * `Admin.insert` is a new administrator (made from the command line), `Admin.json` the wire
 * record: the id and email only. The sign-in counters are written by the checks themselves.
 */
export class Admin extends Model.Class<Admin>("Admin")({
  id: Model.GeneratedByApp(AdminId),
  email: Schema.String,
  password_hash: hidden(Schema.String),
  /** The TOTP secret, sealed with the password. */
  totp_sealed: hidden(Schema.String),
  /** The time step of the last accepted code (a code works once). */
  totp_last_counter: Model.FieldOnly("select")(Schema.NullOr(Schema.NumberFromString)),
  failed_attempts: Model.FieldOnly("select")(Schema.Number),
  locked_until: Model.FieldOnly("select")(Schema.NullOr(Schema.DateFromSelf)),
  created_at: Model.FieldOnly("select", "insert")(Schema.DateFromSelf)
}) {}

/** The wire's administrator (no title: the wire record never had one, and the class would name it `Admin.json`). */
export const AdminJson = Admin.json.annotations({ identifier: "Admin", title: undefined })
