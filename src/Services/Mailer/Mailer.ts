import { Config, ConfigError, Context, Data, Effect, Layer, Option, Redacted } from "effect"
import nodemailer from "nodemailer"
import { AppConfig } from "../AppConfig.js"

/**
 * Outgoing mail. With SMTP_URL it goes out over SMTP (nodemailer); without it, in
 * development only, each message (links included) is written to the log instead, marked
 * as the development mail sink. Production does not start without SMTP_URL: the mails
 * carry sign-in, invitation and approval links, which must never reach a log.
 */
export interface MailMessage {
  readonly to: string
  readonly subject: string
  readonly text: string
  readonly html?: string | undefined
}

/**
 * A mail not sent. `reason` says what failed (the SMTP client's error code, the command
 * and the server's reply code) and nothing of the message: no address, no content.
 */
export class MailError extends Data.TaggedError("MailError")<{ readonly reason: string }> {
  override get message() {
    return `SMTP send failed: ${this.reason}`
  }
}

/** nodemailer's error as a reason fit for a log: its code, command and reply code only. */
const smtpReason = (cause: unknown): string => {
  const { code, command, responseCode } = (typeof cause === "object" && cause !== null ? cause : {}) as {
    readonly code?: unknown
    readonly command?: unknown
    readonly responseCode?: unknown
  }
  return [
    typeof code === "string" ? code : "error",
    typeof command === "string" ? `at ${command}` : undefined,
    typeof responseCode === "number" ? `reply ${responseCode}` : undefined
  ].filter((part) => part !== undefined).join(" ")
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
            catch: (cause) => new MailError({ reason: smtpReason(cause) })
          }).pipe(Effect.asVoid)
      })
    })
  )

/** Development only: each mail, links included, is a log line marked as such. */
export const DevelopmentMailSink = Layer.succeed(
  Mailer,
  Mailer.of({
    send: (message) =>
      Effect.logInfo(
        `Development mail sink (SERVICE_ENV=development, SMTP_URL unset; not sent) to ${message.to}: ${message.subject}\n${message.text}`
      )
  })
)

export const missingSmtpUrl = ConfigError.MissingData(
  ["SMTP_URL"],
  "SERVICE_ENV=production needs SMTP_URL (smtp://user:password@host:587): sign-in, invitation and approval links are mailed, and without a mail server they would be written to the log"
)

/** SMTP when SMTP_URL is set; the development mail sink without it in development; no start in production. */
export const MailerLive = Layer.unwrapEffect(
  Effect.gen(function*() {
    const { isProduction } = yield* AppConfig
    // An empty SMTP_URL (`SMTP_URL=` in an env file) is no mail server either.
    const url = Option.filter(
      Option.map(yield* Config.option(Config.redacted("SMTP_URL")), Redacted.value),
      (value) => value.trim() !== ""
    )
    const from = yield* Config.string("MAIL_FROM").pipe(Config.withDefault("Agent Gateway <no-reply@localhost>"))
    if (Option.isSome(url)) return SmtpMailer(url.value, from)
    return isProduction ? yield* Effect.fail(missingSmtpUrl) : DevelopmentMailSink
  })
)
