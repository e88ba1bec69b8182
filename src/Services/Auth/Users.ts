import { SqlClient } from "@effect/sql"
import { Clock, Effect, Option } from "effect"
import { randomUUID } from "node:crypto"
import { normalizeEmail } from "../../Domain/Email.js"

/** People: found by email (case-insensitive); a verified sign-in creates the account. */
export interface UserRow {
  readonly id: string
  readonly email: string
  readonly name: string | null
  readonly email_verified: boolean
  readonly phone: string | null
  readonly phone_verified: boolean
  readonly created_at: Date
}

export interface UserRecord {
  readonly id: string
  readonly email: string
  readonly name: string | null
  readonly email_verified: boolean
  readonly phone: string | null
  readonly phone_verified: boolean
}

export const userRecord = (row: UserRow): UserRecord => ({
  id: row.id,
  email: row.email,
  name: row.name,
  email_verified: row.email_verified,
  phone: row.phone,
  phone_verified: row.phone_verified
})

export interface OrgMembershipRecord {
  readonly id: string
  readonly name: string
  readonly role: "owner" | "member"
}

export class Users extends Effect.Service<Users>()("Auth/Users", {
  effect: Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient

    const byId = (userId: string) =>
      sql<
        UserRow
      >`SELECT id, email, name, email_verified, phone, phone_verified, created_at FROM users WHERE id = ${userId}`
        .pipe(Effect.map((rows) => Option.fromNullable(rows[0])), Effect.orDie)

    /**
     * The account of an address its owner has just proven (sign-in link or identity
     * provider): created on first use, marked verified otherwise.
     */
    const signedIn = (email: string, name: string | null) =>
      Effect.gen(function*() {
        const now = new Date(yield* Clock.currentTimeMillis)
        const address = normalizeEmail(email)
        const inserted = yield* sql<{ id: string }>`
          INSERT INTO users (id, email, name, email_verified, created_at)
          VALUES (${randomUUID()}, ${address}, ${name}, true, ${now})
          ON CONFLICT ((lower(email))) DO NOTHING
          RETURNING id`
        if (inserted[0]) return { userId: inserted[0].id, newUser: true }
        const existing = yield* sql<{ id: string }>`
          UPDATE users SET email_verified = true, name = COALESCE(name, ${name})
          WHERE lower(email) = ${address}
          RETURNING id`
        return { userId: existing[0]!.id, newUser: false }
      }).pipe(Effect.orDie)

    const memberships = (userId: string) =>
      sql<OrgMembershipRecord & { created_at: Date }>`
        SELECT o.id, o.name, m.role, m.created_at
        FROM org_members m JOIN orgs o ON o.id = m.org_id
        WHERE m.user_id = ${userId}
        ORDER BY m.created_at, o.id`.pipe(
        Effect.map((rows) => rows.map(({ id, name, role }) => ({ id, name, role }))),
        Effect.orDie
      )

    return { byId, signedIn, memberships } as const
  })
}) {}
