import { SqlClient, SqlSchema } from "@effect/sql"
import { Clock, Effect, Schema, Struct } from "effect"
import { randomUUID } from "node:crypto"
import { normalizeEmail } from "../../Domain/Email.js"
import { OrgId, UserId } from "../../Domain/Ids.js"
import { User } from "../../Domain/User.js"

/** People: found by email (case-insensitive); a verified sign-in creates the account. Rows decode to `User`. */
export const OrgMembershipRecord = Schema.Struct({
  id: OrgId,
  name: Schema.String,
  role: Schema.Literal("owner", "member")
})
export type OrgMembershipRecord = typeof OrgMembershipRecord.Type

const UserIdRow = Schema.Struct(Struct.pick(User.fields, "id"))

export class Users extends Effect.Service<Users>()("Auth/Users", {
  effect: Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient

    const findById = SqlSchema.findOne({
      Request: UserId,
      Result: User,
      execute: (userId) =>
        sql`SELECT id, email, name, email_verified, phone, phone_verified, created_at FROM users WHERE id = ${userId}`
    })
    const byId = (userId: UserId) => findById(userId).pipe(Effect.orDie)

    const insertNew = SqlSchema.findOne({
      Request: Schema.Struct({ email: Schema.String, name: Schema.NullOr(Schema.String), now: Schema.DateFromSelf }),
      Result: UserIdRow,
      execute: ({ email, name, now }) =>
        sql`
          INSERT INTO users (id, email, name, email_verified, created_at)
          VALUES (${UserId.make(randomUUID())}, ${email}, ${name}, true, ${now})
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
      Request: UserId,
      Result: OrgMembershipRecord,
      execute: (userId) =>
        sql`
          SELECT o.id, o.name, m.role
          FROM org_members m JOIN orgs o ON o.id = m.org_id
          WHERE m.user_id = ${userId}
          ORDER BY m.created_at, o.id`
    })
    const memberships = (userId: UserId) => findMemberships(userId).pipe(Effect.orDie)

    return { byId, signedIn, memberships } as const
  })
}) {}
