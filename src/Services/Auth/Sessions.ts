import { SqlClient } from "@effect/sql"
import { Clock, Effect } from "effect"
import { randomUUID } from "node:crypto"
import { newSecret, secretPrefixes } from "../../Domain/Secrets.js"
import { sha256Hex } from "../SecretBox/Hashes.js"
import { clip, DAY_MS } from "./Records.js"

/** Sessions last 30 days; only the SHA-256 of the `ss_` token is stored. */
export const SESSION_LIFETIME_MS = 30 * DAY_MS

export interface StartedSession {
  readonly token: string
  readonly sessionId: string
  readonly expiresAt: Date
}

/** Where a session starts from: recorded with it. */
export interface Origin {
  readonly ip: string
  readonly userAgent: string | undefined
}

export class Sessions extends Effect.Service<Sessions>()("Auth/Sessions", {
  effect: Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient

    /** Opens a session for a user; the token is returned once and never stored. */
    const start = (userId: string, origin: Origin) =>
      Effect.gen(function*() {
        const now = yield* Clock.currentTimeMillis
        const token = newSecret(secretPrefixes.session)
        const sessionId = randomUUID()
        const expiresAt = new Date(now + SESSION_LIFETIME_MS)
        yield* sql`
          INSERT INTO sessions (id, user_id, token_hash, created_at, expires_at, ip, user_agent)
          VALUES (${sessionId}, ${userId}, ${sha256Hex(token)}, ${new Date(now)}, ${expiresAt},
                  ${origin.ip}, ${clip(origin.userAgent)})`
        return { token, sessionId, expiresAt } satisfies StartedSession
      }).pipe(Effect.orDie)

    /** Signs a session out; later use answers 401. */
    const revoke = (sessionId: string) =>
      Effect.gen(function*() {
        const now = yield* Clock.currentTimeMillis
        yield* sql`UPDATE sessions SET revoked_at = ${new Date(now)} WHERE id = ${sessionId} AND revoked_at IS NULL`
      }).pipe(Effect.orDie)

    return { start, revoke } as const
  })
}) {}
