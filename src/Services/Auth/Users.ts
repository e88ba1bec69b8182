import { SqlClient, SqlSchema } from "@effect/sql"
import { Clock, Effect, Schema } from "effect"
import { randomUUID } from "node:crypto"
import { normalizeEmail } from "../../Domain/Email.js"
import { OrgId, UserId } from "../../Domain/Ids.js"

/** People: found by email (case-insensitive); a verified sign-in creates the account. Rows decoded. */
export const UserRow = Schema.Struct({
  id: UserId,
  email: Schema.String,
  name: Schema.NullOr(Schema.String),
  email_verified: Schema.Boolean,
  phone: Schema.NullOr(Schema.String),
  phone_verified: Schema.Boolean,
  created_at: Schema.DateFromSelf
})
export type UserRow = typeof UserRow.Type

export type UserRecord = Omit<UserRow, "created_at">

export const userRecord = ({ created_at: _, ...record }: UserRow): UserRecord => record

export const OrgMembershipRecord = Schema.Struct({
  id: OrgId,
  name: Schema.String,
  role: Schema.Literal("owner", "member")
})
export type OrgMembershipRecord = typeof OrgMembershipRecord.Type

const UserIdRow = Schema.Struct({ id: Schema.String })

export class Users extends Effect.Service<Users>()("Auth/Users", {
  effect: Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient

    const findById = SqlSchema.findOne({
      Request: Schema.String,
      Result: UserRow,
      execute: (userId) =>
        sql`SELECT id, email, name, email_verified, phone, phone_verified, created_at FROM users WHERE id = ${userId}`
    })
    const byId = (userId: string) => findById(userId).pipe(Effect.orDie)

    const insertNew = SqlSchema.findOne({
      Request: Schema.Struct({ email: Schema.String, name: Schema.NullOr(Schema.String), now: Schema.DateFromSelf }),
      Result: UserIdRow,
      execute: ({ email, name, now }) =>
        sql`
          INSERT INTO users (id, email, name, email_verified, created_at)
          VALUES (${randomUUID()}, ${email}, ${name}, true, ${now})
          ON CONFLICT ((lower(email))) DO NOTHING
          RETURNING id`
    })
    const markVerified = SqlSchema.single({
      Request: Schema.Struct({ email: Schema.String, name: Schema.NullOr(Schema.String) }),
      Result: UserIdRow,
      execute: ({ email, name }) =>
        sql`
          UPDATE users SET email_verified = true, name = COALESCE(name, ${name})
          WHERE lower(email) = ${email}
          RETURNING id`
    })

    /**
     * The account of an address its owner has just proven (sign-in link or identity
     * provider): created on first use, marked verified otherwise.
     */
    const signedIn = (email: string, name: string | null) =>
      Effect.gen(function*() {
        const now = new Date(yield* Clock.currentTimeMillis)
        const address = normalizeEmail(email)
        const inserted = yield* insertNew({ email: address, name, now })
        if (inserted._tag === "Some") return { userId: inserted.value.id, newUser: true }
        const existing = yield* markVerified({ email: address, name })
        return { userId: existing.id, newUser: false }
      }).pipe(Effect.orDie)

    const findMemberships = SqlSchema.findAll({
      Request: Schema.String,
      Result: OrgMembershipRecord,
      execute: (userId) =>
        sql`
          SELECT o.id, o.name, m.role
          FROM org_members m JOIN orgs o ON o.id = m.org_id
          WHERE m.user_id = ${userId}
          ORDER BY m.created_at, o.id`
    })
    const memberships = (userId: string) => findMemberships(userId).pipe(Effect.orDie)

    return { byId, signedIn, memberships } as const
  })
}) {}
