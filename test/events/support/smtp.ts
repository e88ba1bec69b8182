import PostalMime from "postal-mime"
import { SMTPServer } from "smtp-server"

/**
 * A real SMTP server on loopback standing in for the mail provider. It records every
 * message it accepts (parsed, with plain and HTML parts) and can refuse the next N messages.
 */
export interface ReceivedMail {
  readonly to: Array<string>
  readonly from: string
  readonly subject: string
  readonly text: string
  readonly html: string
}

export interface TestSmtp {
  readonly url: string
  readonly received: Array<ReceivedMail>
  /** Refuse the next `count` messages with a 451 (temporary failure). */
  refuseNext: (count: number) => void
  readonly refused: () => number
  readonly close: () => Promise<void>
}

export const startSmtp = async (): Promise<TestSmtp> => {
  const received: Array<ReceivedMail> = []
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
        const parsed = await PostalMime.parse(Buffer.concat(chunks))
        received.push({
          to: session.envelope.rcptTo.map((r) => r.address),
          from: parsed.from?.address ?? "",
          subject: parsed.subject ?? "",
          text: parsed.text ?? "",
          html: parsed.html ?? ""
        })
        callback()
      })
    }
  })
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve))
  const address = (server.server.address() as { port: number }).port
  return {
    url: `smtp://127.0.0.1:${address}`,
    received,
    refuseNext: (count) => {
      toRefuse = count
    },
    refused: () => refusedCount,
    close: () => new Promise<void>((resolve) => server.close(() => resolve()))
  }
}
