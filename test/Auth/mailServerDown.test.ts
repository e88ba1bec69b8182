import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { seedOrg } from "../support/fixtures.js"
import { freshIp } from "../support/people.js"
import { call, startWorld, type World } from "../support/world.js"

/**
 * A mail server that cannot be reached, in production: a request that mails a link answers
 * 503 `service_unavailable` (retryable, with `Retry-After`), as a database outage does, and
 * the log names neither the recipient nor a stack.
 */
let world: World
const lines: Array<string> = []

beforeAll(async () => {
  world = await startWorld("mail_down", {
    env: {
      SERVICE_ENV: "production",
      BASE_URL: "https://api.example.test",
      SECRETS_ENCRYPTION_KEY: "test-key-for-the-mail-down-suite",
      // Nothing listens on port 1: every connection is refused.
      SMTP_URL: "smtp://127.0.0.1:1",
      LOG_LEVEL: "All"
    },
    logLines: (line) => lines.push(line)
  })
})

afterAll(() => world?.close())

const expectUnavailable = (answer: Awaited<ReturnType<typeof call>>) => {
  expect(answer.status, answer.text).toBe(503)
  expect(answer.json.error).toMatchObject({ code: "service_unavailable", retryable: true })
  expect(answer.headers.get("retry-after")).toMatch(/^\d+$/)
}

describe("an unreachable mail server", () => {
  it("makes sign-in and invitations answer a retryable 503, and keeps the addresses out of the log", async () => {
    const email = "unreachable-recipient@example.com"
    const signIn = await call(world, "POST", "/auth/email/start", { body: { email }, ip: freshIp() })
    expectUnavailable(signIn)

    const { orgId, owner } = await seedOrg(world.db)
    const invitee = "invited-recipient@example.com"
    const invite = await call(world, "POST", `/v1/orgs/${orgId}/invites`, {
      token: owner.sessionToken,
      body: { email: invitee }
    })
    expectUnavailable(invite)

    // The log says the mail server failed, and why, but not to whom and with no stack.
    expect(lines.some((line) => line.includes("Mail not sent") && line.includes("smtp_failure=\"ESOCKET at CONN\"")))
      .toBe(true)
    expect(lines.filter((line) => line.includes(email) || line.includes(invitee))).toEqual([])
    expect(lines.filter((line) => /\bat .+:\d+:\d+\)?/.test(line))).toEqual([])
    expect(lines.filter((line) => /level=ERROR/.test(line))).toEqual([])
  })
})
