import { Layer } from "effect"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { LogLineSink } from "../../src/Layers/LogLines.js"
import { createTestDatabase, type TestDatabase } from "../support/database.js"
import { expectError } from "../support/people.js"
import { request, startServer, type TestServer } from "../support/server.js"
import { startSmtp, type TestSmtp } from "../support/smtp.js"

/**
 * Development without SMTP or Twilio writes mails (links included) and codes to the log;
 * production sets Secure cookies and refuses to text without a provider.
 */
let db: TestDatabase

beforeAll(async () => {
  db = await createTestDatabase("id_envs")
})
afterAll(async () => {
  await db?.drop()
})

const json = (url: string, method: string, body: unknown, headers: Record<string, string> = {}) =>
  request(url, { method, body, headers })

describe("development without SMTP_URL and TWILIO_*", () => {
  let server: TestServer
  const lines: Array<string> = []
  beforeAll(async () => {
    server = await startServer(
      { DATABASE_URL: db.url, LOG_LEVEL: "Info" },
      Layer.succeed(LogLineSink, { write: (line) => lines.push(line) })
    )
  })
  afterAll(async () => {
    await server?.close()
  })

  it("writes the sign-in mail, link included, to the log, and the link works", async () => {
    expect((await json(`${server.url}/auth/email/start`, "POST", { email: "dev@example.com" })).status).toBe(202)
    const line = lines.find((l) => l.includes("dev@example.com") && l.includes("/auth/email/verify?token="))
    expect(line).toContain("Development mail sink (SERVICE_ENV=development, SMTP_URL unset; not sent)")
    const token = line!.match(/token=(sil_[0-9A-Za-z]+)/)![1]!
    const verified = await json(`${server.url}/auth/email/verify`, "POST", { token })
    expect(verified.status).toBe(200)

    const phone = "+15550001111"
    const sent = await json(`${server.url}/v1/me/phone`, "POST", { phone }, {
      authorization: `Bearer ${verified.json.session_token}`
    })
    expect(sent.status).toBe(202)
    // The code as the message words it: the line's other numbers (a fiber id) may have six digits too.
    const sms = lines.find((l) => l.includes(phone) && /verification code is \d{6}\b/.test(l))
    expect(sms).toContain("Development SMS sink (SERVICE_ENV=development, TWILIO_* unset; not sent)")
    const code = sms!.match(/verification code is (\d{6})\b/)![1]!
    const done = await json(`${server.url}/v1/me/phone/verify`, "POST", { code }, {
      authorization: `Bearer ${verified.json.session_token}`
    })
    expect(done.json.user.phone_verified).toBe(true)
  })
})

describe("production", () => {
  let smtp: TestSmtp
  let server: TestServer
  beforeAll(async () => {
    // Production does not start without a mail server (see productionLogs.test.ts).
    smtp = await startSmtp()
    server = await startServer({
      DATABASE_URL: db.url,
      SERVICE_ENV: "production",
      BASE_URL: "https://api.example.test",
      SECRETS_ENCRYPTION_KEY: "test-key-for-the-environments-suite-0123",
      SMTP_URL: smtp.url
    })
  })
  afterAll(async () => {
    await server?.close()
    await smtp?.close()
  })

  it("refuses to start without SECRETS_ENCRYPTION_KEY", async () => {
    await expect(
      startServer({
        DATABASE_URL: db.url,
        SERVICE_ENV: "production",
        BASE_URL: "https://api.example.test",
        SMTP_URL: smtp.url
      })
    ).rejects.toThrow(/SECRETS_ENCRYPTION_KEY/)
  })

  it("marks the session cookie Secure", async () => {
    // A link made directly (mail delivery is covered elsewhere).
    const { newSecret } = await import("../../src/Domain/Secrets.js")
    const { sha256Hex } = await import("../../src/Services/SecretBox/Hashes.js")
    const token = newSecret("sil_")
    await db.query(
      `INSERT INTO sign_in_tokens (id, email, token_hash, created_at, expires_at) VALUES (gen_random_uuid(), 'prod@example.com', $1, now(), now() + interval '15 minutes')`,
      [sha256Hex(token)]
    )
    const res = await request(`${server.url}/auth/email/verify?token=${token}`)
    expect(res.status).toBe(302)
    expect(res.headers.get("location")).toBe("https://api.example.test/dashboard")
    expect(res.headers.get("set-cookie")).toMatch(/; Secure/i)
    const logout = await request(`${server.url}/auth/logout`, {
      method: "POST",
      headers: { cookie: res.headers.get("set-cookie")!.split(";")[0]!, origin: "https://api.example.test" }
    })
    expect(logout.headers.get("set-cookie")).toMatch(/; Secure/i)
  })

  it("answers 503 not_configured for phone codes without an SMS provider", async () => {
    const { newSecret } = await import("../../src/Domain/Secrets.js")
    const { sha256Hex } = await import("../../src/Services/SecretBox/Hashes.js")
    const session = newSecret("ss_")
    const [user] = await db.query("SELECT id FROM users WHERE email = 'prod@example.com'")
    await db.query(
      `INSERT INTO sessions (id, user_id, token_hash, created_at, expires_at) VALUES (gen_random_uuid(), $1, $2, now(), now() + interval '1 day')`,
      [user.id, sha256Hex(session)]
    )
    const res = await json(`${server.url}/v1/me/phone`, "POST", { phone: "+15550002222" }, {
      authorization: `Bearer ${session}`
    })
    expectError(res, 503, "not_configured")
  })
})
