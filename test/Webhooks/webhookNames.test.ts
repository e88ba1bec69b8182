import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { specialNameRefusal } from "../../src/Services/Webhooks/SpecialNames.js"
import { createTestDatabase, type TestDatabase } from "../support/database.js"
import { fakeDns } from "../support/dns.js"
import { seedOrg } from "../support/fixtures.js"
import { startServer, type TestServer } from "../support/server.js"
import { startSmtp, type TestSmtp } from "../support/smtp.js"
import { orgApi } from "./support.js"

/**
 * In production a webhook URL's name is refused when saved if it cannot reach the public
 * internet: special-use names, a trailing dot, names carrying a private address, names that
 * do not resolve, and names resolving to no public address.
 */
let db: TestDatabase
let production: TestServer
/** Production does not start without a mail server. */
let smtp: TestSmtp

/** What the stand-in DNS answers; a name not listed does not resolve. */
const dnsAnswers = new Map<string, Array<string>>([
  ["hooks.example.com", ["93.184.216.34"]],
  ["8.8.8.8.nip.io", ["8.8.8.8"]],
  ["localhost.", ["127.0.0.1"]],
  ["foo.localhost", ["127.0.0.1"]],
  ["10.0.0.1.nip.io", ["10.0.0.1"]],
  ["private.example.com", ["10.1.2.3", "fd00::1"]]
])

beforeAll(async () => {
  db = await createTestDatabase("webhook_names")
  smtp = await startSmtp()
  production = await startServer(
    {
      DATABASE_URL: db.url,
      SERVICE_ENV: "production",
      SECRETS_ENCRYPTION_KEY: "test-key-for-the-names-suite-0123456789",
      SMTP_URL: smtp.url
    },
    fakeDns(dnsAnswers)
  )
})

afterAll(async () => {
  await production?.close()
  await smtp?.close()
  await db?.drop()
})

const create = async (url: string) => {
  const org = await seedOrg(db)
  return orgApi(production.url, org.orgId, org.owner.sessionToken).createWebhook({ url })
}

describe("webhook names in production", () => {
  const refused: Array<[string, RegExp]> = [
    ["https://localhost./hook", /ends with a dot/],
    ["https://foo.localhost/hook", /special-use name/],
    ["https://hooks.invalid/hook", /special-use name/],
    ["https://printer.local/hook", /special-use name/],
    ["https://db.internal/hook", /special-use name/],
    ["https://router.home.arpa/hook", /special-use name/],
    ["https://10.0.0.1.nip.io/hook", /names the address 10\.0\.0\.1/],
    ["https://app-192-168-1-1.sslip.io/hook", /names the address 192\.168\.1\.1/],
    ["https://7f000001.nip.io/hook", /names the address 127\.0\.0\.1/],
    ["https://nowhere.example.com/hook", /does not resolve/],
    ["https://private.example.com/hook", /not a public address/]
  ]
  it.each(refused)("refuses %s with 400 invalid_input", async (url, message) => {
    const answer = await create(url)
    expect(answer.status).toBe(400)
    expect(answer.json).toEqual({
      error: {
        code: "invalid_input",
        message: expect.stringMatching(message),
        doc_url: expect.stringContaining("#invalid_input"),
        retryable: false
      }
    })
  })

  it("accepts a name resolving to a public address, even one carrying a public address", async () => {
    for (const url of ["https://hooks.example.com/hook", "https://8.8.8.8.nip.io/hook"]) {
      const answer = await create(url)
      expect(answer.status, url).toBe(201)
      expect(answer.json.webhook.url).toBe(url)
    }
  })

  it("judges names alone the same way (pure rule)", () => {
    expect(specialNameRefusal("example.com")).toBeUndefined()
    expect(specialNameRefusal("api.stripe.com")).toBeUndefined()
    expect(specialNameRefusal("1.2.3.4.nip.io")).toBeUndefined()
    expect(specialNameRefusal("LOCALHOST")).toBeDefined()
    expect(specialNameRefusal("a.b.onion")).toBeDefined()
    expect(specialNameRefusal("172-16-0-1.sslip.io")).toBeDefined()
  })
})
