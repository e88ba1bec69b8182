import { createServer, type Server } from "node:http"

/**
 * A fake of Twilio's Messages API on loopback: checks the account path and Basic auth
 * like the real one, keeps every message, and can be told to fail.
 */
export interface SentSms {
  readonly to: string
  readonly from: string
  readonly body: string
}

export interface TestTwilio {
  readonly apiBase: string
  readonly accountSid: string
  readonly authToken: string
  readonly from: string
  readonly messages: Array<SentSms>
  /** The last code texted to `to`. */
  readonly lastCode: (to: string) => string
  /** Answer the next `count` requests with this status. */
  readonly failNext: (status: number, count?: number) => void
  readonly close: () => Promise<void>
}

export const startTwilio = async (): Promise<TestTwilio> => {
  const accountSid = "AC" + "0123456789abcdef".repeat(2)
  const authToken = "test-twilio-auth-token-" + Math.random().toString(36).slice(2)
  const from = "+15005550006"
  const messages: Array<SentSms> = []
  let failures: Array<number> = []
  const server: Server = createServer((req, res) => {
    let body = ""
    req.on("data", (chunk) => (body += chunk))
    req.on("end", () => {
      const expectedAuth = "Basic " + Buffer.from(`${accountSid}:${authToken}`).toString("base64")
      const reply = (status: number, json: unknown) => {
        res.writeHead(status, { "content-type": "application/json" })
        res.end(JSON.stringify(json))
      }
      if (req.method !== "POST" || req.url !== `/2010-04-01/Accounts/${accountSid}/Messages.json`) {
        return reply(404, { code: 20404, message: "Not found" })
      }
      if (req.headers.authorization !== expectedAuth) return reply(401, { code: 20003, message: "Authenticate" })
      const forced = failures.shift()
      if (forced !== undefined) return reply(forced, { code: 30000, message: "Forced failure" })
      const form = new URLSearchParams(body)
      const message = { to: form.get("To") ?? "", from: form.get("From") ?? "", body: form.get("Body") ?? "" }
      if (!message.to || !message.body) return reply(400, { code: 21604, message: "A 'To' phone number is required." })
      messages.push(message)
      reply(201, { sid: "SM" + messages.length.toString().padStart(32, "0"), status: "queued", to: message.to })
    })
  })
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve))
  const port = (server.address() as { port: number }).port
  return {
    apiBase: `http://127.0.0.1:${port}`,
    accountSid,
    authToken,
    from,
    messages,
    lastCode: (to) => {
      const message = [...messages].reverse().find((m) => m.to === to)
      const code = message?.body.match(/\b(\d{6})\b/)?.[1]
      if (!code) throw new Error(`No code was texted to ${to}`)
      return code
    },
    failNext: (status, count = 1) => {
      failures = Array.from({ length: count }, () => status)
    },
    close: () => new Promise<void>((resolve) => server.close(() => resolve()))
  }
}
