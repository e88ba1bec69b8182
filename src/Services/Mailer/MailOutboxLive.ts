import { SqlClient } from "@effect/sql"
import { Clock, Effect, Layer } from "effect"
import { randomUUID } from "node:crypto"
import { SecretBox } from "../SecretBox/SecretBox.js"
import { MailOutbox } from "./MailOutbox.js"

/**
 * The durable mail outbox: `enqueue` writes one row (inside the caller's transaction when
 * there is one); `MailWorker` sends it. The message is stored sealed (it may carry a
 * one-time link) and cleared once sent. A repeated `dedupeKey` adds nothing.
 */
export const MailOutboxLive = Layer.effect(
  MailOutbox,
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const box = yield* SecretBox
    return MailOutbox.of({
      enqueue: (message) =>
        Effect.gen(function*() {
          const now = new Date(yield* Clock.currentTimeMillis)
          const sealed = yield* box.seal(
            JSON.stringify({ to: message.to, subject: message.subject, text: message.text, html: message.html ?? null })
          )
          yield* sql`
            INSERT INTO mail_outbox (id, dedupe_key, to_address, message_enc, status, attempts, next_attempt_at, created_at,
                                     forget_recipient)
            VALUES (${randomUUID()}, ${
            message.dedupeKey ?? null
          }, ${message.to}, ${sealed}, 'pending', 0, ${now}, ${now}, ${message.forgetRecipient === true})
            ON CONFLICT (dedupe_key) DO NOTHING`
        }).pipe(Effect.orDie)
    })
  })
).pipe(Layer.provide(SecretBox.Default))
