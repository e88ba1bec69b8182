import PostalMime from "postal-mime"
import { SMTPServer } from "smtp-server"

/**
 * A real SMTP server on loopback standing in for the mail provider. It keeps every message
 * it accepts (parsed, with plain and HTML parts) so tests can read alerts and sign-in or
 * invitation links out of it, and can refuse the next N messages to exercise retries.
 */
export interface ReceivedMail {
  /** Envelope recipients, lower case. */
  readonly to: ReadonlyArray<string>
  /** The address in the From header. */
  readonly from: string
  readonly subject: string
  readonly text: string
  readonly html: string
  readonly raw: string
}

export interface TestSmtp {
  readonly url: string
  /** Accepted messages, in arrival order (refused ones are not kept). */
  readonly messages: Array<ReceivedMail>
  /** Resolves with the first message to `address` (any case) that matches `predicate`. */
  readonly waitFor: (address: string, predicate?: (mail: ReceivedMail) => boolean) => Promise<ReceivedMail>
  /** Refuse the next `count` messages with a 451 (temporary failure). */
  readonly refuseNext: (count: number) => void
  readonly refused: () => number
  readonly close: () => Promise<void>
}

export const startSmtp = async (): Promise<TestSmtp> => {
  const messages: Array<ReceivedMail> = []
  const waiters: Array<() => void> = []
  let toRefuse = 0
  let refusedCount = 0
  const server = new SMTPServer({
    authOptional: true,
    disabledCommands: ["STARTTLS", "AUTH"],
    logger: false,
    onData(stream, session, callback) {
      const chunks: Array<Buffer> = []
      stream.on("data", (chunk: Buffer) => chunks.push(chunk))
      stream.on("end", async () => {
        if (toRefuse > 0) {
          toRefuse--
          refusedCount++
          const error = new Error("Try again later") as Error & { responseCode: number }
          error.responseCode = 451
          return callback(error)
        }
        const raw = Buffer.concat(chunks).toString("utf8")
        const parsed = await PostalMime.parse(raw)
        messages.push({
          to: session.envelope.rcptTo.map((r) => r.address.toLowerCase()),
          from: parsed.from?.address ?? "",
          subject: parsed.subject ?? "",
          text: parsed.text ?? "",
          html: parsed.html ?? "",
          raw
        })
        waiters.splice(0).forEach((wake) => wake())
        callback()
      })
    }
  })
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve))
  const port = (server.server.address() as { port: number }).port
  const waitFor = (address: string, predicate: (mail: ReceivedMail) => boolean = () => true) =>
    new Promise<ReceivedMail>((resolve, reject) => {
      const target = address.toLowerCase()
      const timer = setTimeout(() => reject(new Error(`No mail to ${address} arrived`)), 10_000)
      const check = () => {
        const found = messages.find((mail) => mail.to.includes(target) && predicate(mail))
        if (found) {
          clearTimeout(timer)
          resolve(found)
        } else waiters.push(check)
      }
      check()
    })
  return {
    url: `smtp://127.0.0.1:${port}`,
    messages,
    waitFor,
    refuseNext: (count) => {
      toRefuse = count
    },
    refused: () => refusedCount,
    close: () => new Promise<void>((resolve) => server.close(() => resolve()))
  }
}

/** The first URL in a mail's text that contains `needle`. */
export const linkIn = (mail: ReceivedMail, needle: string): string => {
  const found = mail.text.match(/https?:\/\/\S+/g)?.find((url) => url.includes(needle))
  if (!found) throw new Error(`No link with ${needle} in mail "${mail.subject}"`)
  return found
}
