import { Effect, Schedule } from "effect"
import { ServiceUnavailable } from "../../Errors/ApiErrors.js"
import type { Mailer, MailMessage } from "./Mailer.js"

/** Mail sent while a request waits goes out with a couple of quick retries. */
export const mailRetry = Schedule.exponential("200 millis").pipe(Schedule.intersect(Schedule.recurs(2)))

/**
 * Sends a mail a request waits for (a sign-in link, an invitation). A mail server that
 * keeps failing is a dependency down, answered as a database outage is: 503
 * `service_unavailable`, retryable, with `Retry-After`. The log says why the server failed
 * (the request's own line says which request) and nothing of the message: the recipient's
 * address is personal data.
 */
export const sendNow = (mailer: Mailer["Type"], message: MailMessage) =>
  mailer.send(message).pipe(
    Effect.retry(mailRetry),
    Effect.catchTag("MailError", (error) =>
      Effect.zipRight(
        Effect.logWarning("Mail not sent: the mail server failed; the request answers 503").pipe(
          Effect.annotateLogs({ smtp_failure: error.reason })
        ),
        new ServiceUnavailable({ message: "The mail server cannot be reached right now; retry shortly" })
      ))
  )
