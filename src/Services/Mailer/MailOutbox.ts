import { Context, type Effect } from "effect"
import type { MailMessage } from "./Mailer.js"

/**
 * Durable outgoing mail: `enqueue` writes a row (call it inside the transaction of the
 * change the mail is about); a worker sends it through the Mailer and retries failures,
 * so a restart loses none. A `dedupeKey` makes a second enqueue of the same mail a no-op.
 */
export class MailOutbox extends Context.Tag("Mailer/MailOutbox")<MailOutbox, {
  readonly enqueue: (
    message: MailMessage & {
      readonly dedupeKey?: string | undefined
      /** Erase the recipient's address from the outbox once the mail is sent or finally fails. */
      readonly forgetRecipient?: boolean | undefined
    }
  ) => Effect.Effect<void>
}>() {}
