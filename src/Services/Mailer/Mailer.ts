import { Config, Context, Effect, Layer, Option, Redacted } from "effect"
import nodemailer from "nodemailer"

/**
 * Outgoing mail. With SMTP_URL it goes out over SMTP (nodemailer); without it, in
 * development, each message (links included) is written to the log instead.
 */
export interface MailMessage {
  readonly to: string
  readonly subject: string
  readonly text: string
  readonly html?: string | undefined
}

export class MailError extends Error {
  readonly _tag = "MailError"
}

export class Mailer extends Context.Tag("Mailer/Mailer")<Mailer, {
  readonly send: (message: MailMessage) => Effect.Effect<void, MailError>
}>() {}

export const SmtpMailer = (url: string, from: string) =>
  Layer.scoped(
    Mailer,
    Effect.gen(function*() {
      const transport = yield* Effect.acquireRelease(
        Effect.sync(() => nodemailer.createTransport(url)),
        (t) => Effect.sync(() => t.close())
      )
      return Mailer.of({
        send: (message) =>
          Effect.tryPromise({
            try: () => transport.sendMail({ from, ...message }),
            catch: (cause) => new MailError(`SMTP send to ${message.to} failed: ${String(cause)}`)
          }).pipe(Effect.asVoid)
      })
    })
  )

export const LogMailer = Layer.succeed(
  Mailer,
  Mailer.of({
    send: (message) =>
      Effect.logInfo(`Mail (not sent: SMTP_URL unset) to ${message.to}: ${message.subject}\n${message.text}`)
  })
)

/** SMTP when SMTP_URL is set, the log otherwise. */
export const MailerLive = Layer.unwrapEffect(
  Effect.gen(function*() {
    const url = yield* Config.option(Config.redacted("SMTP_URL"))
    const from = yield* Config.string("MAIL_FROM").pipe(Config.withDefault("Agent Gateway <no-reply@localhost>"))
    return Option.match(url, { onNone: () => LogMailer, onSome: (u) => SmtpMailer(Redacted.value(u), from) })
  })
)
