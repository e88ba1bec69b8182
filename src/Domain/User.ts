import { Model } from "@effect/sql"
import { Schema } from "effect"
import { UserId } from "./Ids.js"

/**
 * A person, declared once: `User` decodes its row, `User.json` the wire record (the account's
 * creation time stays off the wire). Accounts are made by a verified sign-in (`Auth/Users.ts`).
 */
export class User extends Model.Class<User>("User")({
  id: Model.GeneratedByApp(UserId),
  email: Schema.String,
  name: Schema.NullOr(Schema.String),
  email_verified: Schema.Boolean,
  phone: Schema.NullOr(Schema.String),
  phone_verified: Schema.Boolean,
  created_at: Model.Field({ select: Schema.DateFromSelf, insert: Schema.DateFromSelf })
}) {}

/** The wire's user (no title: the wire record never had one, and the class would name it `User.json`). */
export const UserJson = User.json.annotations({ identifier: "User", title: undefined })
