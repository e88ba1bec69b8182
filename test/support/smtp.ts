import PostalMime from "postal-mime"
import { SMTPServer } from "smtp-server"

/**
 * A real SMTP server on loopback that keeps every message it receives, for tests that
 * read sign-in and invitation links out of the mail the service sent.
 */
export interface ReceivedMail {
  readonly to: ReadonlyArray<string>
  readonly from: string
  readonly subject: string
  readonly text: string
  readonly raw: string
}

export interface TestSmtp {
  readonly url: string
  readonly messages: Array<ReceivedMail>
  /** Resolves with the first message to `address` (lower case) that arrives after `since` messages. */
  readonly waitFor: (address: string, predicate?: (mail: ReceivedMail) => boolean) => Promise<ReceivedMail>
  readonly close: () => Promise<void>
}

export const startSmtp = async (): Promise<TestSmtp> => {
  const messages: Array<ReceivedMail> = []
  const waiters: Array<() => void> = []
  const server = new SMTPServer({
    authOptional: true,
    disabledCommands: ["STARTTLS", "AUTH"],
    logger: false,
    onData(stream, session, callback) {
      const chunks: Array<Buffer> = []
      stream.on("data", (chunk: Buffer) => chunks.push(chunk))
      stream.on("end", async () => {
        const raw = Buffer.concat(chunks).toString("utf8")
        const parsed = await PostalMime.parse(raw)
        messages.push({
          to: session.envelope.rcptTo.map((r) => r.address.toLowerCase()),
          from: session.envelope.mailFrom ? session.envelope.mailFrom.address : "",
          subject: parsed.subject ?? "",
          text: parsed.text ?? "",
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
    close: () => new Promise<void>((resolve) => server.close(() => resolve()))
  }
}

/** The first URL in a mail's text that contains `needle`. */
export const linkIn = (mail: ReceivedMail, needle: string): string => {
  const found = mail.text.match(/https?:\/\/\S+/g)?.find((url) => url.includes(needle))
  if (!found) throw new Error(`No link with ${needle} in mail "${mail.subject}"`)
  return found
}
