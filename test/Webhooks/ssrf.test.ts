import { Effect } from "effect"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { addressRefusal } from "../../src/Services/Webhooks/AddressPolicy.js"
import { DnsResolver, postWebhook } from "../../src/Services/Webhooks/WebhookHttp.js"
import { createTestDatabase, type TestDatabase } from "../support/database.js"
import { fakeDns } from "../support/dns.js"
import { seedOrg } from "../support/fixtures.js"
import { startReceiver, type TestReceiver } from "../support/receiver.js"
import { startServer, type TestServer } from "../support/server.js"
import { startSmtp, type TestSmtp } from "../support/smtp.js"
import { orgApi } from "./support.js"

/**
 * Server-side request forgery: which webhook URLs are refused when saved (production rules),
 * and the check at delivery time on the address actually connected to (DNS rebinding).
 */
let db: TestDatabase
let production: TestServer
let development: TestServer
let receiver: TestReceiver
/** Production does not start without a mail server. */
let smtp: TestSmtp
/** What the stand-in DNS answers for each name (development server only). */
const dnsAnswers = new Map<string, Array<string>>()

beforeAll(async () => {
  db = await createTestDatabase("events_ssrf")
  receiver = await startReceiver()
  smtp = await startSmtp()
  production = await startServer({
    DATABASE_URL: db.url,
    SERVICE_ENV: "production",
    SECRETS_ENCRYPTION_KEY: "test-key-for-the-ssrf-suite-0123456789",
    SMTP_URL: smtp.url
  })
  development = await startServer({ DATABASE_URL: db.url }, fakeDns(dnsAnswers))
})

afterAll(async () => {
  await production?.close()
  await development?.close()
  await receiver?.close()
  await smtp?.close()
  await db?.drop()
})

const refused = [
  ["10/8", "https://10.0.0.1/hook"],
  ["10/8 top", "https://10.255.255.254/hook"],
  ["172.16/12", "https://172.16.0.1/hook"],
  ["172.16/12 top", "https://172.31.255.254/hook"],
  ["192.168/16", "https://192.168.1.10/hook"],
  ["127/8", "https://127.0.0.1/hook"],
  ["127/8 other", "https://127.12.0.1:8443/hook"],
  ["127/8 decimal form", "https://2130706433/hook"],
  ["127/8 short form", "https://127.1/hook"],
  ["localhost", "https://localhost/hook"],
  ["0/8", "https://0.0.0.0/hook"],
  ["0/8 other", "https://0.1.2.3/hook"],
  ["169.254/16 (cloud metadata)", "https://169.254.169.254/latest"],
  ["100.64/10", "https://100.64.0.1/hook"],
  ["100.64/10 top", "https://100.127.255.254/hook"],
  ["198.18/15", "https://198.18.0.1/hook"],
  ["198.18/15 top", "https://198.19.255.254/hook"],
  ["240/4", "https://240.0.0.1/hook"],
  ["broadcast", "https://255.255.255.255/hook"],
  ["multicast", "https://224.0.0.1/hook"],
  ["documentation", "https://192.0.2.1/hook"],
  ["::1", "https://[::1]/hook"],
  ["::", "https://[::]/hook"],
  ["fc00::/7", "https://[fc00::1]/hook"],
  ["fc00::/7 (fd)", "https://[fd12:3456::1]/hook"],
  ["fe80::/10", "https://[fe80::1]/hook"],
  ["::ffff:127.0.0.1", "https://[::ffff:127.0.0.1]/hook"],
  ["::ffff:10.0.0.1", "https://[::ffff:10.0.0.1]/hook"],
  ["::ffff:192.168.0.1 (hex)", "https://[::ffff:c0a8:1]/hook"],
  ["NAT64 of 10.0.0.1", "https://[64:ff9b::a00:1]/hook"],
  ["6to4 of 10.0.0.1", "https://[2002:a00:1::1]/hook"],
  ["IPv6 multicast", "https://[ff02::1]/hook"]
] as const

describe("webhook URL rules in production", () => {
  it.each(refused)("refuses %s (%s) with 400 invalid_input", async (_label, url) => {
    const org = await seedOrg(db)
    const answer = await orgApi(production.url, org.orgId, org.owner.sessionToken).createWebhook({ url })
    expect(answer.status).toBe(400)
    expect(answer.json).toEqual({
      error: {
        code: "invalid_input",
        message: expect.any(String),
        doc_url: expect.stringContaining("#invalid_input"),
        retryable: false
      }
    })
  })

  it("refuses plain http, even to a public address, and http://localhost", async () => {
    const org = await seedOrg(db)
    const api = orgApi(production.url, org.orgId, org.owner.sessionToken)
    for (const url of ["http://93.184.216.34/hook", "http://localhost:8080/hook", "http://127.0.0.1/hook"]) {
      const answer = await api.createWebhook({ url })
      expect(answer.status, url).toBe(400)
      expect(answer.json.error.message, url).toMatch(/https/)
    }
  })

  it("allows https to a public address (IPv4 and IPv6)", async () => {
    const org = await seedOrg(db)
    const api = orgApi(production.url, org.orgId, org.owner.sessionToken)
    for (
      const url of [
        "https://93.184.216.34/hook",
        "https://[2606:4700:4700::1111]/hook",
        "https://8.8.8.8:8443/path?x=1"
      ]
    ) {
      const answer = await api.createWebhook({ url })
      expect(answer.status, url).toBe(201)
      expect(answer.json.webhook.url).toBe(url)
    }
  })

  it("classifies addresses the same way the table says (pure policy)", () => {
    const strict = { allowLoopback: false }
    for (
      const address of [
        "10.1.1.1",
        "172.20.0.1",
        "192.168.0.1",
        "127.0.0.1",
        "0.0.0.0",
        "169.254.0.1",
        "100.64.1.1",
        "198.18.1.1",
        "240.1.1.1",
        "::1",
        "fc00::1",
        "fe80::1",
        "::ffff:127.0.0.1",
        "::ffff:10.0.0.1"
      ]
    ) {
      expect(addressRefusal(address, strict), address).toBeDefined()
    }
    for (const address of ["93.184.216.34", "1.1.1.1", "2606:4700::1111", "::ffff:8.8.8.8"]) {
      expect(addressRefusal(address, strict), address).toBeUndefined()
    }
    expect(addressRefusal("127.0.0.1", { allowLoopback: true })).toBeUndefined()
    expect(addressRefusal("::1", { allowLoopback: true })).toBeUndefined()
    expect(addressRefusal("10.0.0.1", { allowLoopback: true })).toBeDefined()
  })
})

describe("the address connected to is checked at every delivery", () => {
  it("refuses a name that resolved to loopback when saved but to a private address at delivery (DNS rebinding)", async () => {
    const org = await seedOrg(db)
    const api = orgApi(development.url, org.orgId, org.owner.sessionToken)
    dnsAnswers.set("rebind.test", ["127.0.0.1"])
    const made = await api.createWebhook({ url: `http://rebind.test:${receiver.port}/rebind` })
    expect(made.status).toBe(201)

    dnsAnswers.set("rebind.test", ["10.0.0.7"])
    const blocked = await api.testWebhook(made.json.webhook.id)
    expect(blocked.json).toMatchObject({ status: "pending", last_status_code: null })
    expect(blocked.json.last_error).toMatch(
      /^Address not allowed: rebind.test resolves to 10.0.0.7 is not a public address/
    )

    dnsAnswers.set("rebind.test", ["127.0.0.1", "169.254.169.254"])
    const mixed = await api.testWebhook(made.json.webhook.id)
    expect(mixed.json.last_error).toMatch(/169.254.169.254/)
    expect(receiver.received.filter((r) => r.path === "/rebind")).toHaveLength(0)

    // The answer the check passes is the address the connection goes to.
    dnsAnswers.set("rebind.test", ["127.0.0.1"])
    const delivered = await api.testWebhook(made.json.webhook.id)
    expect(delivered.json).toMatchObject({ status: "delivered", last_status_code: 200 })
    const got = receiver.received.filter((r) => r.path === "/rebind")
    expect(got).toHaveLength(1)
    expect(got[0]!.headers.host).toBe(`rebind.test:${receiver.port}`)
  })

  it("refuses a private answer for a name when the URL is saved", async () => {
    const org = await seedOrg(db)
    dnsAnswers.set("internal.test", ["192.168.10.10"])
    const answer = await orgApi(development.url, org.orgId, org.owner.sessionToken).createWebhook({
      url: "https://internal.test/hook"
    })
    expect(answer.status).toBe(400)
    expect(answer.json.error.message).toContain("192.168.10.10")
  })

  it("never connects to a forbidden literal or resolved address under production rules", async () => {
    const production = { allowLoopback: false }
    const run = (url: string, resolver?: (host: string) => Array<string>) =>
      Effect.runPromise(
        postWebhook({ url, headers: { "Content-Type": "application/json" }, body: "{}", policy: production }).pipe(
          resolver === undefined
            ? (e) => e
            : Effect.provideService(DnsResolver, {
              lookup: async (host: string) =>
                resolver(host).map((address) => ({ address, family: address.includes(":") ? 6 : 4 }))
            })
        )
      )
    const before = receiver.received.length
    expect(await run(`http://127.0.0.1:${receiver.port}/direct`)).toMatchObject({
      delivered: false,
      error: expect.stringMatching(/^Address not allowed/)
    })
    expect(await run(`http://[::ffff:127.0.0.1]:${receiver.port}/direct`)).toMatchObject({
      delivered: false,
      error: expect.stringMatching(/^Address not allowed/)
    })
    expect(await run(`http://receiver.test:${receiver.port}/direct`, () => ["127.0.0.1"])).toMatchObject({
      delivered: false,
      error: expect.stringMatching(/^Address not allowed/)
    })
    expect(await run(`http://receiver.test:${receiver.port}/direct`, () => ["::1"])).toMatchObject({ delivered: false })
    expect(receiver.received.length).toBe(before)
    // Loopback allowed (development rules): the same request goes through.
    const allowed = await Effect.runPromise(
      postWebhook({
        url: `http://receiver.test:${receiver.port}/direct`,
        headers: {},
        body: "{}",
        policy: { allowLoopback: true }
      }).pipe(
        Effect.provideService(DnsResolver, { lookup: async () => [{ address: "127.0.0.1", family: 4 }] })
      )
    )
    expect(allowed).toEqual({ delivered: true, statusCode: 200, error: null })
  })
})
