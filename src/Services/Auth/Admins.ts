import { SqlClient, SqlSchema } from "@effect/sql"
import { Clock, Data, Effect, Option, Schema, Struct } from "effect"
import { randomUUID } from "node:crypto"
import * as OTPAuth from "otpauth"
import { Admin } from "../../Domain/Admin.js"
import type { AdminUser } from "../../Domain/Current.js"
import { normalizeEmail } from "../../Domain/Email.js"
import { AdminId } from "../../Domain/Ids.js"
import { newSecret, secretPrefixes } from "../../Domain/Secrets.js"
import { Conflict, InvalidCredentials, Locked, Unauthenticated, WeakPassword } from "../../Errors/ApiErrors.js"
import { sha256Hex } from "../SecretBox/Hashes.js"
import { decoyHash, hashPassword, MIN_ADMIN_PASSWORD_LENGTH, seal, unseal, verifyPassword } from "./Passwords.js"
import { clip, HOUR_MS, MINUTE_MS } from "./Records.js"
import type { Origin } from "./Sessions.js"

/** Five failed sign-ins lock an administrator for 15 minutes. */
export const ADMIN_MAX_FAILURES = 5
export const ADMIN_LOCK_MS = 15 * MINUTE_MS
/** Administrator sessions (`as_` tokens) last 12 hours. */
export const ADMIN_SESSION_LIFETIME_MS = 12 * HOUR_MS

const TOTP_PERIOD_SECONDS = 30
const TOTP_ISSUER = "Agent Gateway admin"

const totpFor = (email: string, secret: OTPAuth.Secret) =>
  new OTPAuth.TOTP({
    issuer: TOTP_ISSUER,
    label: email,
    algorithm: "SHA1",
    digits: 6,
    period: TOTP_PERIOD_SECONDS,
    secret
  })

const weak = new WeakPassword({
  message: `Administrator passwords have at least ${MIN_ADMIN_PASSWORD_LENGTH} characters`
})
const invalidCredentials = new InvalidCredentials({ message: "Wrong email, password or code" })

const AdminSessionRow = Schema.Struct({
  session_id: Schema.String,
  admin_id: Admin.fields.id,
  email: Admin.fields.email
})
const AdminIdRow = Schema.Struct(Struct.pick(Admin.fields, "id"))

/** A locked account: the 429 `locked` error and how long until it opens (for `Retry-After`). */
export class AdminLockedOut extends Data.TaggedError("AdminLockedOut")<{
  readonly retryAfterSeconds: number
  readonly error: Locked
}> {}

type Attempt =
  | { readonly _tag: "Unknown" }
  | { readonly _tag: "Locked"; readonly retryAfterSeconds: number }
  | { readonly _tag: "Failed"; readonly locked: boolean }
  | {
    readonly _tag: "SignedIn"
    readonly token: string
    readonly admin: Admin
    readonly expiresAt: Date
  }

/**
 * Administrators: created from the command line (`npm run admin -- create`), signed in
 * with email, password and a TOTP code. Their `as_` sessions reach admin endpoints only.
 */
export class Admins extends Effect.Service<Admins>()("Auth/Admins", {
  effect: Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient

    const insertAdmin = SqlSchema.findOne({
      Request: Admin.insert,
      Result: AdminIdRow,
      execute: (admin) =>
        sql`INSERT INTO admins ${sql.insert(admin)} ON CONFLICT ((lower(email))) DO NOTHING RETURNING id`
    })
    const lockByEmail = SqlSchema.findOne({
      Request: Schema.String,
      Result: Admin,
      execute: (email) =>
        sql`
          SELECT id, email, password_hash, totp_sealed, totp_last_counter, failed_attempts, locked_until, created_at
          FROM admins WHERE lower(email) = ${email} FOR UPDATE`
    })
    const findSession = SqlSchema.findOne({
      Request: Schema.Struct({ tokenHash: Schema.String, now: Schema.DateFromSelf }),
      Result: AdminSessionRow,
      execute: ({ now, tokenHash }) =>
        sql`
          SELECT s.id AS session_id, a.id AS admin_id, a.email
          FROM admin_sessions s JOIN admins a ON a.id = s.admin_id
          WHERE s.token_hash = ${tokenHash} AND s.revoked_at IS NULL AND s.expires_at > ${now}`
    })
    const findByEmail = SqlSchema.findOne({
      Request: Schema.String,
      Result: AdminIdRow,
      execute: (email) => sql`SELECT id FROM admins WHERE lower(email) = ${email}`
    })

    /** Creates an administrator; answers the TOTP secret (shown once by the script). */
    const create = (email: string, password: string) =>
      Effect.gen(function*() {
        if (password.length < MIN_ADMIN_PASSWORD_LENGTH) return yield* weak
        const address = normalizeEmail(email)
        const secret = new OTPAuth.Secret({ size: 20 })
        const passwordHash = yield* hashPassword(password)
        const sealed = yield* seal(password, secret.base32)
        const now = new Date(yield* Clock.currentTimeMillis)
        const id = AdminId.make(randomUUID())
        const inserted = yield* insertAdmin(
          Admin.insert.make({ id, email: address, password_hash: passwordHash, totp_sealed: sealed, created_at: now })
        ).pipe(Effect.orDie)
        if (Option.isNone(inserted)) {
          return yield* new Conflict({ message: `An administrator ${address} already exists` })
        }
        return { id, email: address, totpSecret: secret.base32, otpauthUri: totpFor(address, secret).toString() }
      })

    /** Checks password and code; failures are counted and lock the account (committed either way). */
    const signIn = (email: string, password: string, code: string, origin: Origin) =>
      Effect.gen(function*() {
        if (password.length < MIN_ADMIN_PASSWORD_LENGTH) return yield* weak
        const attempt = yield* Effect.gen(function*() {
          const nowMs = yield* Clock.currentTimeMillis
          const now = new Date(nowMs)
          const admin = Option.getOrUndefined(yield* lockByEmail(normalizeEmail(email)))
          if (admin === undefined) {
            yield* verifyPassword(password, yield* decoyHash)
            return { _tag: "Unknown" } as Attempt
          }
          if (admin.locked_until !== null && admin.locked_until.getTime() > nowMs) {
            const retryAfterSeconds = Math.ceil((admin.locked_until.getTime() - nowMs) / 1000)
            return { _tag: "Locked", retryAfterSeconds } as Attempt
          }
          const counter = yield* Effect.gen(function*() {
            if (!(yield* verifyPassword(password, admin.password_hash))) return undefined
            const secret = yield* unseal(password, admin.totp_sealed)
            if (secret === undefined) return undefined
            const delta = OTPAuth.TOTP.validate({
              token: code.trim(),
              secret: OTPAuth.Secret.fromBase32(secret),
              algorithm: "SHA1",
              digits: 6,
              period: TOTP_PERIOD_SECONDS,
              timestamp: nowMs,
              window: 1
            })
            if (delta === null) return undefined
            const used = Math.floor(nowMs / 1000 / TOTP_PERIOD_SECONDS) + delta
            // A code works once: a replay of the last accepted code is a failure.
            if (admin.totp_last_counter !== null && used <= admin.totp_last_counter) return undefined
            return used
          })
          if (counter === undefined) {
            const failures = admin.failed_attempts + 1
            const locked = failures >= ADMIN_MAX_FAILURES
            yield* sql`
              UPDATE admins SET failed_attempts = ${locked ? 0 : failures},
                locked_until = ${locked ? new Date(nowMs + ADMIN_LOCK_MS) : admin.locked_until}
              WHERE id = ${admin.id}`
            return { _tag: "Failed", locked } as Attempt
          }
          yield* sql`
            UPDATE admins SET failed_attempts = 0, locked_until = NULL, totp_last_counter = ${counter}
            WHERE id = ${admin.id}`
          const token = newSecret(secretPrefixes.adminSession)
          const expiresAt = new Date(nowMs + ADMIN_SESSION_LIFETIME_MS)
          yield* sql`
            INSERT INTO admin_sessions (id, admin_id, token_hash, created_at, expires_at, ip, user_agent)
            VALUES (${randomUUID()}, ${admin.id}, ${sha256Hex(token)}, ${now}, ${expiresAt}, ${origin.ip},
                    ${clip(origin.userAgent)})`
          return { _tag: "SignedIn", token, admin, expiresAt } as Attempt
        }).pipe(sql.withTransaction, Effect.orDie)
        switch (attempt._tag) {
          case "Unknown":
          case "Failed":
            return yield* invalidCredentials
          case "Locked":
            return yield* new AdminLockedOut({
              retryAfterSeconds: attempt.retryAfterSeconds,
              error: new Locked({
                message: `Too many failed sign-ins: this account is locked for ${
                  Math.ceil(attempt.retryAfterSeconds / 60)
                } more minutes`
              })
            })
          case "SignedIn":
            return { token: attempt.token, admin: attempt.admin, expiresAt: attempt.expiresAt }
        }
      })

    /** The administrator behind an `as_` token, if it is live. */
    const authenticate = (token: string) =>
      Effect.gen(function*() {
        const now = new Date(yield* Clock.currentTimeMillis)
        const row = Option.getOrUndefined(yield* findSession({ tokenHash: sha256Hex(token), now }).pipe(Effect.orDie))
        if (row === undefined) {
          return yield* new Unauthenticated({ message: "Invalid, expired or signed-out administrator session" })
        }
        return { admin_id: row.admin_id, email: row.email, session_id: row.session_id } satisfies AdminUser
      })

    const signOut = (sessionId: string) =>
      Effect.gen(function*() {
        const now = new Date(yield* Clock.currentTimeMillis)
        yield* sql`UPDATE admin_sessions SET revoked_at = ${now} WHERE id = ${sessionId} AND revoked_at IS NULL`.pipe(
          Effect.orDie
        )
      })

    /** Whether an administrator with this email exists (for the script). */
    const exists = (email: string) => findByEmail(normalizeEmail(email)).pipe(Effect.map(Option.isSome), Effect.orDie)

    /** The administrator with this email as the audit log names them (the script's `--admin`). */
    const byEmail = (email: string) =>
      findByEmail(normalizeEmail(email)).pipe(
        Effect.map(Option.map((row) => ({ admin_id: row.id, email: normalizeEmail(email) }))),
        Effect.orDie
      )

    return { create, signIn, authenticate, signOut, exists, byEmail } as const
  })
}) {}
