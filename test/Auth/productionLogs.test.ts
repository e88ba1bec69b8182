import * as OTPAuth from "otpauth"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { secretPrefixes } from "../../src/Domain/SecretPrefixes.js"
import { APPROVAL_LINK_PREFIX } from "../../src/Services/Approvals/Approvals.js"
import { emailFindInput } from "../Purchasing/support.js"
import { startChildService } from "../support/childService.js"
import { createTestDatabase, type TestDatabase } from "../support/database.js"
import { seedAgent } from "../support/fixtures.js"
import { createAdmin, freshIp, joinAs, makeAgent, makeOrgKey, owner } from "../support/people.js"
import { startServer } from "../support/server.js"
import { linkIn } from "../support/smtp.js"
import { call, startWorld, type World } from "../support/world.js"

/**
 * Outside development no secret reaches the log: production does not start without a mail
 * server (the mails carry sign-in links), and with one, every flow that makes or spends a
 * secret writes none to any log line, at the most detailed level.
 */
const PRODUCTION = {
  SERVICE_ENV: "production",
  BASE_URL: "https://api.example.test",
  SECRETS_ENCRYPTION_KEY: "test-key-for-the-production-logs-suite"
}

describe("production without SMTP_URL", () => {
  let db: TestDatabase
  beforeAll(async () => {
    db = await createTestDatabase("prod_no_smtp")
  })
  afterAll(async () => {
    await db?.drop()
  })

  it("the process refuses to start, naming SMTP_URL", async () => {
    const started = startChildService({ ...PRODUCTION, DATABASE_URL: db.url, SMTP_URL: "" })
    const failure = await started.then(
      (child) => {
        child.process.kill("SIGKILL")
        return "started"
      },
      (error: Error) => error.message
    )
    expect(failure).toMatch(/service exited \(1\) before ready/)
    expect(failure).toContain("SERVICE_ENV=production needs SMTP_URL")
  })

  it("the in-process service refuses too", async () => {
    await expect(startServer({ ...PRODUCTION, DATABASE_URL: db.url })).rejects.toThrow(/SMTP_URL/)
  })
})

/** A secret of any kind the service makes: its prefix and at least 16 characters of base62. */
const secretPattern = new RegExp(
  `(${[...Object.values(secretPrefixes), APPROVAL_LINK_PREFIX].join("|")})[0-9A-Za-z]{16,}`
)

describe("production log lines", () => {
  let world: World
  const lines: Array<string> = []
  /** Every secret the flows below were given, and the codes texted or typed. */
  const issued: Array<string> = []

  beforeAll(async () => {
    world = await startWorld("prod_logs", {
      smtp: true,
      twilio: true,
      env: { ...PRODUCTION, LOG_LEVEL: "All", ACCESS_LOG: "true" },
      logLines: (line) => lines.push(line)
    })
  })
  afterAll(async () => {
    await world?.close()
  })

  it("carry no sign-in link, session, key, secret or code through sign-in, keys, invitations and approvals", async () => {
    // Sign-in by mail (sil_ -> ss_), phone code by SMS, an org.
    const boss = await owner(world, "Logged")
    issued.push(boss.token)
    const mails = () => world.smtp.messages.map((mail) => mail.text).join("\n")
    for (const match of mails().matchAll(/token=((?:sil|inv)_[0-9A-Za-z]+)/g)) issued.push(match[1]!)
    // Keys and secrets: org keys, agent keys (made and rotated), a webhook's signing secret.
    issued.push((await makeOrgKey(world, boss.token, boss.orgId, "write")).secret)
    const agent = await makeAgent(world, boss.token, boss.orgId, { name: "Logged agent" })
    issued.push(agent.key)
    const rotated = await call(world, "POST", `/v1/orgs/${boss.orgId}/agents/${agent.id}/rotate-key`, {
      token: boss.token
    })
    expect(rotated.status).toBe(200)
    issued.push(rotated.json.key)
    const hook = await call(world, "POST", `/v1/orgs/${boss.orgId}/webhooks`, {
      token: boss.token,
      body: { url: "https://hooks.example.com/in", events: ["balance.low"] }
    })
    if (hook.status === 201) issued.push(hook.json.secret)
    // An invitation accepted (inv_), and a failed sign-in with a used link.
    const member = await joinAs(world, boss.token, boss.orgId)
    issued.push(member.token)
    const usedLink = /token=(sil_[0-9A-Za-z]+)/.exec(mails())![1]!
    expect((await call(world, "GET", `/auth/email/verify?token=${usedLink}`)).status).toBe(401)
    // An approval mail's one-click link, opened and pressed (apl_).
    const careful = await seedAgent(world.db, boss.orgId, { approvalThresholdCredits: 100n })
    issued.push(careful.key)
    const asked = await call(world, "POST", "/v1/execute", {
      token: careful.key,
      body: { tool: "hunter-email-finder", inputs: [emailFindInput(1), emailFindInput(2), emailFindInput(3)] }
    })
    expect(asked.status).toBe(202)
    const approvalMail = await world.smtp.waitFor(boss.email, (mail) => mail.text.includes("Approve: "))
    const approveLink = linkIn(approvalMail, "/approve")
    const linkToken = new URL(approveLink).searchParams.get("token")!
    issued.push(linkToken)
    expect((await call(world, "GET", `/v1/approval-links/${linkToken}`)).status).toBe(200)
    expect((await call(world, "POST", `/v1/approval-links/${linkToken}`)).status).toBe(200)
    // An administrator's sign-in (password, TOTP code, as_ session).
    const password = "a long admin passphrase for logs"
    const admin = await createAdmin(world, "ops-logs@example.com", password)
    const code = OTPAuth.TOTP.generate({ secret: OTPAuth.Secret.fromBase32(admin.totpSecret) })
    const adminSignIn = await call(world, "POST", "/admin/sign-in", {
      body: { email: "ops-logs@example.com", password, code },
      ip: freshIp()
    })
    expect(adminSignIn.status).toBe(200)
    issued.push(adminSignIn.json.session_token, password, admin.totpSecret)

    expect(issued.filter((secret) => secret === undefined || secret.length < 16)).toEqual([])
    const codes = [...world.twilio.messages.map((sms) => /\b(\d{6})\b/.exec(sms.body)![1]!), code]
    expect(codes.length).toBeGreaterThan(1)
    // The suite saw the log: the access log's lines and the service's own are there.
    expect(lines.some((line) => line.includes("route=/auth/email/start"))).toBe(true)
    expect(lines.length).toBeGreaterThan(20)
    expect(lines.filter((line) => secretPattern.test(line))).toEqual([])
    expect(lines.filter((line) => issued.some((secret) => line.includes(secret)))).toEqual([])
    expect(
      lines.filter((line) => codes.some((code) => new RegExp(`(^|[^0-9A-Za-z])${code}($|[^0-9A-Za-z])`).test(line)))
    )
      .toEqual([])
    expect(lines.filter((line) => /mail sink|sms sink/i.test(line))).toEqual([])
  })
})
