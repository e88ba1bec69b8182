import { Layer, ManagedRuntime } from "effect"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { type EventInput, eventTypeNames, eventTypes } from "../../src/Domain/Events.js"
import { DatabaseLive } from "../../src/Layers/Database.js"
import { AppConfig } from "../../src/Services/AppConfig.js"
import { MailerLive } from "../../src/Services/Mailer/Mailer.js"
import { MailWorkerLive } from "../../src/Services/Mailer/MailWorker.js"
import { SecretBox } from "../../src/Services/SecretBox/SecretBox.js"
import { createTestDatabase, type TestDatabase } from "../support/database.js"
import { type EventEmitter, eventEmitter } from "../support/eventEmitter.js"
import { addMember, seedOrg, seedUser } from "../support/fixtures.js"
import { makeShiftableClock, type ShiftableClock } from "../support/shiftableClock.js"
import { startSmtp, type TestSmtp } from "../support/smtp.js"
import { testConfig } from "../support/testLayers.js"
import { workersSettled } from "../support/workerRounds.js"
import { eventually } from "../support/world.js"

/**
 * Owner mail: durable rows sent through the Mailer to a real SMTP server on loopback, by the
 * mail worker as the service runs it (its Mailer, SecretBox and database layers) in this
 * process, without HTTP: the rows, the retry schedule and what survives a restart are the
 * outbox's rules, not a route's.
 */
let db: TestDatabase
let worker: ManagedRuntime.ManagedRuntime<never, unknown> | undefined
let smtp: TestSmtp
let emitter: EventEmitter
let clock: ShiftableClock

/** Starts the mail worker (a restart when it ran before and was stopped). */
const start = async () => {
  const config = testConfig({
    DATABASE_URL: db.url,
    DATABASE_POOL_SIZE: "4",
    SMTP_URL: smtp.url,
    MAIL_FROM: "Service <alerts@example.com>",
    BASE_URL: "https://gateway.example"
  })
  worker = ManagedRuntime.make(
    MailWorkerLive.pipe(
      Layer.provide(Layer.mergeAll(MailerLive, SecretBox.Default)),
      Layer.provide(Layer.mergeAll(DatabaseLive, AppConfig.Default)),
      Layer.provide(config),
      Layer.provide(clock.layer)
    )
  )
  await worker.runtime()
}

beforeAll(async () => {
  db = await createTestDatabase("events_mail")
  smtp = await startSmtp()
  clock = makeShiftableClock()
  await start()
  emitter = eventEmitter(db, { BASE_URL: "https://gateway.example" }, clock.layer)
})

afterAll(async () => {
  await emitter?.close()
  await worker?.dispose()
  await smtp?.close()
  await db?.drop()
})

/** One event of every type, with data as the emitting areas write it. */
const samples: { [T in EventInput["type"]]: Extract<EventInput, { type: T }> } = {
  "balance.low": { type: "balance.low", data: { balance_credits: "4200", balance_usd: "4.200" } },
  "budget.80pct": {
    type: "budget.80pct",
    data: {
      agent_id: "7d4c1c1e-0e0f-4b43-9d5e-2f7a6d1c0b11",
      agent_name: "Scout",
      spent_credits: "40000",
      budget_credits: "50000"
    }
  },
  "approval.requested": {
    type: "approval.requested",
    data: {
      approval_id: "a1",
      agent_id: "g1",
      tool_id: "t1",
      item_count: 3,
      amount_credits: "25000",
      amount_usd: "25.000",
      reason: "over_threshold",
      expires_at: "2026-11-23T10:00:00.000Z"
    }
  },
  "approval.decided": {
    type: "approval.decided",
    data: { approval_id: "a1", agent_id: "g1", status: "approved", note: null }
  },
  "job.completed": {
    type: "job.completed",
    data: { job_id: "j1", status: "done", receipt_id: "r1", item_count: 30, passed: 29, expired: 1 }
  },
  "tool.paused": {
    type: "tool.paused",
    data: { tool_id: "t1", tool_name: "Finder <Pro>", reason: "Accuracy fell under the floor" }
  },
  "dispute.decided": {
    type: "dispute.decided",
    data: {
      dispute_id: "d1",
      receipt_id: "r1",
      item_index: 2,
      decision: "upheld",
      refunded_credits: "150",
      note: "Wrong email"
    }
  },
  "price.changed": {
    type: "price.changed",
    data: {
      tool_id: "t1",
      tool_name: "Finder",
      old_credits: "100",
      new_credits: "120",
      valid_from: "2026-12-01T00:00:00.000Z"
    }
  },
  "trial.expiring": { type: "trial.expiring", data: { credits: "3500", expires_on: "2026-12-01" } },
  "webhook.test": { type: "webhook.test", data: { message: "hello" } }
}

const expectedSubjects: Record<string, RegExp> = {
  "balance.low": /Credit balance low: \$4\.20 left/,
  "budget.80pct": /Agent "Scout" has used 80% of its monthly budget/,
  "tool.paused": /Tool paused: Finder <Pro>/,
  "dispute.decided": /Dispute upheld: 150 credits \(\$0\.15\) refunded/,
  "price.changed": /Price change for Finder/,
  "trial.expiring": /Your trial credits expire on 1 Dec 2026/
}

const mailsTo = (address: string) => smtp.messages.filter((m) => m.to.includes(address))

const outboxRows = (address: string) =>
  db.query(`SELECT status, attempts, last_error, message_enc FROM mail_outbox WHERE to_address = $1`, [address])

describe("owner mail", () => {
  it("mails every owner, and no member, for each event marked emailed; none for the others", async () => {
    const org = await seedOrg(db, { name: "Acme" })
    const second = await seedUser(db)
    const member = await seedUser(db)
    await addMember(db, org.orgId, second.userId, "owner")
    await addMember(db, org.orgId, member.userId, "member")
    for (const type of eventTypeNames) await emitter.emit(org.orgId, samples[type])
    const emailed = eventTypeNames.filter((type) => eventTypes[type].emailed)
    expect(emailed).toEqual([
      "balance.low",
      "budget.80pct",
      "tool.paused",
      "dispute.decided",
      "price.changed",
      "trial.expiring"
    ])
    await eventually(
      () => (mailsTo(org.owner.email).length >= emailed.length && mailsTo(second.email).length >= emailed.length
        ? true
        : undefined)
    )
    await workersSettled(["mail worker"])
    expect(mailsTo(member.email)).toEqual([])
    for (const owner of [org.owner.email, second.email]) {
      const mails = mailsTo(owner)
      expect(mails).toHaveLength(emailed.length)
      for (const type of emailed) {
        const mail = mails.find((m) => expectedSubjects[type]!.test(m.subject))
        expect(mail, type).toBeDefined()
        expect(mail!.subject.startsWith("[Acme] ")).toBe(true)
        expect(mail!.from).toBe("alerts@example.com")
        // Plain and HTML parts, each saying what happened and what to do.
        for (const part of [mail!.text, mail!.html]) {
          expect(part, type).toContain("What happened")
          expect(part, type).toContain("What to do")
          expect(part, type).toContain(org.orgId)
        }
        expect(mail!.html).toContain("<h3>What to do</h3>")
        expect(mail!.text).toContain("https://gateway.example/docs")
        // Owner words: no API path and no error code in what to do.
        expect(mail!.text, type).not.toMatch(
          /(GET|POST|PATCH|PUT|DELETE) \/v1\/|_credits with|over_budget|tool_paused|insufficient_credits/
        )
      }
    }
    const paused = mailsTo(org.owner.email).find((m) => m.subject.includes("Tool paused"))!
    expect(paused.text).toContain("Finder <Pro> (t1) was paused: Accuracy fell under the floor")
    expect(paused.html).toContain("Finder &lt;Pro&gt;")
    expect(paused.html).not.toContain("Finder <Pro>")
    const budget = mailsTo(org.owner.email).find((m) => m.subject.includes("80%"))!
    expect(budget.text).toContain("40,000 credits ($40.00) of its monthly budget of 50,000 credits ($50.00)")
    // Event types in words: the footer names what happened, never the type's code.
    expect(budget.text).toContain("An agent has used 80% of its monthly budget (event ")
    expect(budget.text).not.toContain("budget.80pct")
    // The low-balance mail: dollars with two decimals, and the dashboard's words where an API path was.
    const low = mailsTo(org.owner.email).find((m) => m.subject.includes("Credit balance low"))!
    expect(low.subject).toBe("[Acme] Credit balance low: $4.20 left")
    expect(low.text).toContain("4,200 credits ($4.20) are left")
    expect(low.text).toContain(
      `Settings in the dashboard: https://gateway.example/dashboard/orgs/${org.orgId}/settings`
    )
    expect(low.text).not.toMatch(/\/v1\//)
    expect(budget.text).toContain(
      `on the Agents page of the dashboard: https://gateway.example/dashboard/orgs/${org.orgId}/agents`
    )
    expect(paused.text).toContain(`https://gateway.example/dashboard/orgs/${org.orgId}/tools`)
    const rows = await outboxRows(org.owner.email)
    expect(rows.every((r: any) => r.status === "sent" && r.attempts === 1 && r.message_enc === null)).toBe(true)
  })

  it("keeps queued mail encrypted at rest and makes a repeated dedupe key a no-op", async () => {
    await worker!.dispose()
    worker = undefined
    const address = `dedupe-${Date.now()}@example.com`
    await emitter.enqueueMail({
      to: address,
      subject: "Sign-in link",
      text: "https://gateway.example/auth/t/secret-token-123",
      dedupeKey: `k-${address}`
    })
    await emitter.enqueueMail({
      to: address,
      subject: "Sign-in link",
      text: "https://gateway.example/auth/t/secret-token-123",
      dedupeKey: `k-${address}`
    })
    const rows = await db.query(`SELECT * FROM mail_outbox WHERE to_address = $1`, [address])
    expect(rows).toHaveLength(1)
    expect(JSON.stringify(rows)).not.toContain("secret-token-123")
    expect(JSON.stringify(rows)).not.toContain("Sign-in link")
    // Queued while no worker ran: sent once one starts (a restart loses none).
    await start()
    const mail = await eventually(() => mailsTo(address)[0])
    expect(mail.text).toContain("secret-token-123")
    await workersSettled(["mail worker"])
    expect(mailsTo(address)).toHaveLength(1)
  })

  it("tries a failed send again after 30 seconds, then doubling, until it goes out", async () => {
    const address = `retry-${Date.now()}@example.com`
    smtp.refuseNext(2)
    await emitter.enqueueMail({ to: address, subject: "Retry me", text: "body" })
    const first = await eventually(async () => {
      const [row] = await outboxRows(address)
      return row?.attempts === 1 ? row : undefined
    })
    expect(first.status).toBe("pending")
    expect(first.last_error).toMatch(/451|Try again later/)
    const [{ wait }] = await db.query(
      `SELECT extract(epoch FROM next_attempt_at - created_at)::int AS wait FROM mail_outbox WHERE to_address = $1`,
      [address]
    )
    expect(wait).toBeGreaterThanOrEqual(30)
    expect(wait).toBeLessThan(45)
    // Not before it is due.
    await workersSettled(["mail worker"])
    expect((await outboxRows(address))[0].attempts).toBe(1)
    clock.advance(31_000)
    await eventually(async () => ((await outboxRows(address))[0]?.attempts === 2 ? true : undefined))
    clock.advance(61_000)
    const mail = await eventually(() => mailsTo(address)[0])
    expect(mail.subject).toBe("Retry me")
    // The server has the mail before the sender records it as sent: wait for the row to catch up.
    const sent = await eventually(async () => {
      const [row] = await outboxRows(address)
      return row?.status === "sent" ? row : undefined
    })
    expect(sent).toMatchObject({ status: "sent", attempts: 3, last_error: null })
    expect(smtp.refused()).toBeGreaterThanOrEqual(2)
  })

  it("forgets an erased person's address when their last try fails, error text included", async () => {
    const address = `erased-${Date.now()}@example.com`
    smtp.refuseNext(1)
    await emitter.enqueueMail({ to: address, subject: "Your data was erased", text: "body", forgetRecipient: true })
    await eventually(async () => ((await outboxRows(address))[0]?.attempts === 1 ? true : undefined))
    // The next try is the last the schedule allows; the server refuses it too.
    await db.query(`UPDATE mail_outbox SET attempts = 14 WHERE to_address = $1`, [address])
    smtp.refuseNext(1)
    clock.advance(31_000)
    const [row] = await eventually(async () => {
      const rows = await db.query(`SELECT status, to_address, last_error FROM mail_outbox WHERE dedupe_key IS NULL
                                   AND status = 'failed' AND attempts = 15`)
      return rows.length > 0 ? rows : undefined
    })
    expect(row.to_address).toBe("erased")
    expect(row.last_error).not.toContain(address)
    expect(await outboxRows(address)).toHaveLength(0)
  })

  it("survives a restart with a send still failing: the row waits and goes out later", async () => {
    const org = await seedOrg(db, { name: "Restart Co" })
    smtp.refuseNext(1)
    await emitter.emit(org.orgId, samples["trial.expiring"])
    await eventually(async () => ((await outboxRows(org.owner.email))[0]?.attempts === 1 ? true : undefined))
    await worker!.dispose()
    worker = undefined
    clock.advance(31_000)
    await start()
    const mail = await eventually(() => mailsTo(org.owner.email)[0])
    expect(mail.subject).toBe("[Restart Co] Your trial credits expire on 1 Dec 2026")
    expect(mail.text).toContain("3,500 trial credits ($3.50) expire on 1 Dec 2026 (UTC)")
  })
})
