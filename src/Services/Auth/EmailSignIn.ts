import { SqlClient } from "@effect/sql"
import { Clock, Effect, Option, Schema } from "effect"
import { randomUUID } from "node:crypto"
import { normalizeEmail } from "../../Domain/Email.js"
import { newSecret, secretPrefixes } from "../../Domain/Secrets.js"
import { InvalidToken } from "../../Errors/ApiErrors.js"
import { Mailer } from "../Mailer/Mailer.js"
import { sendNow } from "../Mailer/MailNow.js"
import { sha256Hex } from "../SecretBox/Hashes.js"
import { statementRows } from "../StatementRows.js"
import { MINUTE_MS } from "./Records.js"
import { type Origin, Sessions } from "./Sessions.js"
import { Users } from "./Users.js"

/** A sign-in link works once, within 15 minutes. */
export const SIGN_IN_LINK_LIFETIME_MS = 15 * MINUTE_MS

const invalidLink = new InvalidToken({
  message: "This sign-in link is unknown, already used or expired; ask for a new one"
})

/** Where a mailed sign-in link opens: see `start`. */
export interface SignInLanding {
  readonly next?: string | undefined
  readonly verifyPath?: `/${string}` | undefined
}

/**
 * Email sign-in: `start` mails a one-time link; `verify` spends it and opens a session,
 * creating the account when the address is new.
 */
export class EmailSignIn extends Effect.Service<EmailSignIn>()("Auth/EmailSignIn", {
  dependencies: [Sessions.Default, Users.Default],
  effect: Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const spentTokenRows = statementRows(Schema.Struct({ email: Schema.String }))
    const mailer = yield* Mailer
    const sessions = yield* Sessions
    const users = yield* Users

    /**
     * Mails a one-time link. By default it opens GET /auth/email/verify, and `next` (a dashboard
     * path) rides on it to where it should land; `landing.verifyPath` names another page that
     * spends the token itself (the MCP consent step's, which continues where it left off).
     */
    const start = (email: string, requestIp: string, baseUrl: string, landing: SignInLanding = {}) =>
      Effect.gen(function*() {
        const now = yield* Clock.currentTimeMillis
        const address = normalizeEmail(email)
        const token = newSecret(secretPrefixes.signInLink)
        yield* sql`
          INSERT INTO sign_in_tokens (id, email, token_hash, created_at, expires_at, ip)
          VALUES (${randomUUID()}, ${address}, ${sha256Hex(token)}, ${new Date(now)},
                  ${new Date(now + SIGN_IN_LINK_LIFETIME_MS)}, ${requestIp})`.pipe(Effect.orDie)
        const link = `${baseUrl}${landing.verifyPath ?? "/auth/email/verify"}?token=${encodeURIComponent(token)}${
          landing.next === undefined ? "" : `&next=${encodeURIComponent(landing.next)}`
        }`
        yield* sendNow(mailer, {
          to: address,
          subject: "Your sign-in link",
          text: [
            "Use this link to sign in. It works once and expires in 15 minutes:",
            "",
            link,
            "",
            "If you did not ask to sign in, ignore this email: nothing happens without the link."
          ].join("\n")
        })
      })

    /** Spends a link (once, unexpired) and opens a session. */
    const verify = (token: string, origin: Origin) =>
      Effect.gen(function*() {
        const now = new Date(yield* Clock.currentTimeMillis)
        const spent = yield* spentTokenRows.one(sql`
              UPDATE sign_in_tokens SET used_at = ${now}
              WHERE token_hash = ${sha256Hex(token)} AND used_at IS NULL AND expires_at > ${now}
              RETURNING email`).pipe(Effect.orDie)
        if (Option.isNone(spent)) return yield* invalidLink
        const row = spent.value
        const { newUser, userId } = yield* users.signedIn(row.email, null)
        const session = yield* sessions.start(userId, origin)
        return { sessionToken: session.token, userId, newUser }
      }).pipe(sql.withTransaction, Effect.catchTag("SqlError", Effect.die))

    return { start, verify } as const
  })
}) {}
