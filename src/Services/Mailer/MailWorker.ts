import { SqlClient } from "@effect/sql"
import { Clock, Duration, Effect, Layer, Option, Schedule, Schema } from "effect"
import { randomUUID } from "node:crypto"
import { runDispatcher } from "../Background/Dispatcher.js"
import { delayAfterTries, LEASE } from "../Background/DurableRetry.js"
import { SecretBox } from "../SecretBox/SecretBox.js"
import { statementRows } from "../StatementRows.js"
import { Mailer, type MailMessage } from "./Mailer.js"

/**
 * Sends the mail outbox through the Mailer. A failed send is tried again after 30 s, then
 * doubling up to an hour between tries, 15 tries in all (about nine hours); after that the
 * row is marked failed. Each send is bounded by a timeout so a hung SMTP server cannot hold
 * a row past its lease.
 */
export const mailRetrySchedule = Schedule.exponential("30 seconds").pipe(
  Schedule.union(Schedule.spaced("1 hour")),
  Schedule.intersect(Schedule.recurs(14))
)

const SEND_TIMEOUT = Duration.seconds(30)

const ClaimedMail = Schema.Struct({
  id: Schema.String,
  message_enc: Schema.NullOr(Schema.String),
  attempts: Schema.Number,
  lease_token: Schema.String
})
type ClaimedMail = typeof ClaimedMail.Type

export const MailWorkerLive = Layer.scopedDiscard(
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const claimedRows = statementRows(ClaimedMail)
    const mailer = yield* Mailer
    const box = yield* SecretBox

    const claim = (limit: number) =>
      Effect.gen(function*() {
        const now = yield* Clock.currentTimeMillis
        const statement = sql`
          WITH due AS (
            SELECT id FROM mail_outbox
            WHERE status = 'pending' AND next_attempt_at <= ${new Date(now)}
              AND (lease_until IS NULL OR lease_until <= ${new Date(now)})
            ORDER BY next_attempt_at
            LIMIT ${limit}
            FOR UPDATE SKIP LOCKED
          )
          UPDATE mail_outbox m
          SET lease_until = ${new Date(now + Duration.toMillis(LEASE))}, lease_token = ${randomUUID()}
          FROM due WHERE m.id = due.id
          RETURNING m.id, m.message_enc, m.attempts, m.lease_token`
        return yield* claimedRows.all(statement)
      }).pipe(Effect.orDie)

    const failed = (row: ClaimedMail, error: string) =>
      Effect.gen(function*() {
        const now = yield* Clock.currentTimeMillis
        const tries = row.attempts + 1
        const delay = yield* delayAfterTries(mailRetrySchedule, tries, now)
        yield* Option.match(delay, {
          onNone: () =>
            sql`
              UPDATE mail_outbox
              SET status = 'failed', attempts = ${tries}, next_attempt_at = NULL,
                  message_enc = NULL, lease_until = NULL, lease_token = NULL,
                  last_error = CASE WHEN forget_recipient THEN 'Not sent; recipient erased' ELSE ${error} END,
                  to_address = CASE WHEN forget_recipient THEN 'erased' ELSE to_address END
              WHERE id = ${row.id} AND lease_token = ${row.lease_token}`,
          onSome: (wait) =>
            sql`
              UPDATE mail_outbox
              SET attempts = ${tries}, last_error = ${error},
                  next_attempt_at = ${new Date(now + Duration.toMillis(wait))}, lease_until = NULL, lease_token = NULL
              WHERE id = ${row.id} AND lease_token = ${row.lease_token}`
        })
        yield* Effect.logWarning(`Mail ${row.id} not sent (try ${tries}): ${error}`)
      })

    const process = (row: ClaimedMail) =>
      Effect.gen(function*() {
        if (row.message_enc === null) return yield* failed(row, "Message missing")
        const opened = yield* Effect.either(box.open(row.message_enc))
        if (opened._tag === "Left") {
          return yield* failed(row, "Message cannot be decrypted (SECRETS_ENCRYPTION_KEY changed?)")
        }
        const stored = JSON.parse(opened.right) as { to: string; subject: string; text: string; html: string | null }
        const message: MailMessage = {
          to: stored.to,
          subject: stored.subject,
          text: stored.text,
          ...(stored.html === null ? {} : { html: stored.html })
        }
        const sent = yield* mailer.send(message).pipe(
          Effect.timeoutFail({
            duration: SEND_TIMEOUT,
            onTimeout: () => new Error("SMTP send timed out")
          }),
          Effect.either
        )
        if (sent._tag === "Left") return yield* failed(row, sent.left.message)
        const now = yield* Clock.currentTimeMillis
        yield* sql`
          UPDATE mail_outbox
          SET status = 'sent', sent_at = ${new Date(now)}, attempts = ${row.attempts + 1}, last_error = NULL,
              next_attempt_at = NULL, message_enc = NULL, lease_until = NULL, lease_token = NULL,
              to_address = CASE WHEN forget_recipient THEN 'erased' ELSE to_address END
          WHERE id = ${row.id} AND lease_token = ${row.lease_token}`
      }).pipe(Effect.orDie)

    yield* runDispatcher({ name: "mail worker", concurrency: 4, pollInterval: "500 millis", claim, process })
  })
).pipe(Layer.provide(SecretBox.Default))
