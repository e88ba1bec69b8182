import { SqlClient, SqlSchema } from "@effect/sql"
import { Clock, Effect, Option, Schema } from "effect"
import { randomInt, timingSafeEqual } from "node:crypto"
import type { UserId } from "../../Domain/Ids.js"
import { InvalidCode, NotFound, PhoneInUse } from "../../Errors/ApiErrors.js"
import { sha256Hex } from "../SecretBox/Hashes.js"
import { Sms } from "../Sms/Sms.js"
import { MINUTE_MS } from "./Records.js"
import { Users } from "./Users.js"

/** A phone code is valid 10 minutes and allows 5 tries. */
export const PHONE_CODE_LIFETIME_MS = 10 * MINUTE_MS
export const PHONE_CODE_MAX_ATTEMPTS = 5

const codeHash = (userId: string, phone: string, code: string) => sha256Hex(`phone:${userId}:${phone}:${code}`)

const sameHash = (a: string, b: string) => a.length === b.length && timingSafeEqual(Buffer.from(a), Buffer.from(b))

const wrongCode = new InvalidCode({ message: "That code is wrong or expired; ask for a new one" })
const phoneInUse = new PhoneInUse({ message: "This phone number is already verified on another account" })

/** The signed-in person's own account: who they are, their orgs, their phone. */
export class Accounts extends Effect.Service<Accounts>()("Auth/Accounts", {
  dependencies: [Users.Default],
  effect: Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const users = yield* Users
    const sms = yield* Sms

    const userOf = (userId: UserId) =>
      Effect.flatMap(
        users.byId(userId),
        Option.match({
          onNone: () => Effect.fail(new NotFound({ message: "No such user" })),
          onSome: (row) => Effect.succeed(row)
        })
      )

    const me = (userId: UserId) => Effect.all({ user: userOf(userId), orgs: users.memberships(userId) })

    const lockPhoneCode = SqlSchema.findOne({
      Request: Schema.String,
      Result: Schema.Struct({
        phone: Schema.String,
        code_hash: Schema.String,
        attempts: Schema.Number,
        expires_at: Schema.DateFromSelf
      }),
      execute: (userId) =>
        sql`SELECT phone, code_hash, attempts, expires_at FROM phone_codes WHERE user_id = ${userId} FOR UPDATE`
    })

    const verifiedElsewhere = (phone: string, userId: string) =>
      sql`SELECT id FROM users WHERE phone = ${phone} AND phone_verified AND id <> ${userId}`.pipe(
        Effect.map((rows) => rows.length > 0),
        Effect.orDie
      )

    /** Texts a fresh 6-digit code to `phone` (E.164); a new request replaces the previous code. */
    const startPhoneVerification = (userId: string, phone: string) =>
      Effect.gen(function*() {
        if (yield* verifiedElsewhere(phone, userId)) return yield* phoneInUse
        const now = yield* Clock.currentTimeMillis
        const code = randomInt(0, 1_000_000).toString().padStart(6, "0")
        const expiresAt = new Date(now + PHONE_CODE_LIFETIME_MS)
        yield* sql`
          INSERT INTO phone_codes (user_id, phone, code_hash, attempts, created_at, expires_at)
          VALUES (${userId}, ${phone}, ${codeHash(userId, phone, code)}, 0, ${new Date(now)}, ${expiresAt})
          ON CONFLICT (user_id) DO UPDATE SET phone = excluded.phone, code_hash = excluded.code_hash,
            attempts = 0, created_at = excluded.created_at, expires_at = excluded.expires_at`.pipe(Effect.orDie)
        yield* sms.send(phone, `Your verification code is ${code}. It expires in 10 minutes.`).pipe(
          Effect.catchTag("SmsError", Effect.die)
        )
        return { expiresAt }
      })

    type Outcome = { readonly _tag: "Wrong" } | { readonly _tag: "InUse" } | { readonly _tag: "Verified" }

    /** Checks the code; a right one marks the phone verified on this account. */
    const verifyPhone = (userId: UserId, code: string) =>
      Effect.gen(function*() {
        const outcome = yield* Effect.gen(function*() {
          const now = new Date(yield* Clock.currentTimeMillis)
          const pending = Option.getOrUndefined(yield* lockPhoneCode(userId))
          if (
            pending === undefined || pending.expires_at <= now || pending.attempts >= PHONE_CODE_MAX_ATTEMPTS
          ) {
            return { _tag: "Wrong" } as Outcome
          }
          if (!sameHash(codeHash(userId, pending.phone, code), pending.code_hash)) {
            // The failed try is counted (and committed): five wrong codes spend the code.
            yield* sql`UPDATE phone_codes SET attempts = attempts + 1 WHERE user_id = ${userId}`
            return { _tag: "Wrong" } as Outcome
          }
          if (yield* verifiedElsewhere(pending.phone, userId)) return { _tag: "InUse" } as Outcome
          yield* sql`UPDATE users SET phone = ${pending.phone}, phone_verified = true WHERE id = ${userId}`
          yield* sql`DELETE FROM phone_codes WHERE user_id = ${userId}`
          return { _tag: "Verified" } as Outcome
        }).pipe(
          sql.withTransaction,
          // Two accounts racing for one number: the unique index on verified phones decides.
          Effect.catchIf(
            (error) => error._tag === "SqlError" && String((error.cause as { code?: unknown })?.code) === "23505",
            () => Effect.succeed({ _tag: "InUse" } as Outcome)
          ),
          Effect.orDie
        )
        if (outcome._tag === "Wrong") return yield* wrongCode
        if (outcome._tag === "InUse") return yield* phoneInUse
        return yield* userOf(userId)
      })

    return { me, startPhoneVerification, verifyPhone } as const
  })
}) {}
