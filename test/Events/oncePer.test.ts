import { PgClient } from "@effect/sql-pg"
import { ConfigProvider, Effect, Layer, ManagedRuntime, Redacted } from "effect"
import { randomUUID } from "node:crypto"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import type { AgentId, OrgId } from "../../src/Domain/Ids.js"
import { Ledger } from "../../src/Services/Ledger/Ledger.js"
import { LedgerMaintenance } from "../../src/Services/Ledger/LedgerMaintenance.js"
import { LedgerStandaloneLive } from "../../src/Services/Ledger/LedgerStandalone.js"
import { createTestDatabase, type TestDatabase } from "../support/database.js"
import { seedAgent, seedOrg } from "../support/fixtures.js"
import { startReceiver, type TestReceiver } from "../support/receiver.js"
import { startServer, type TestServer } from "../support/server.js"
import { makeShiftableClock, type ShiftableClock } from "../support/shiftableClock.js"
import { startSmtp, type TestSmtp } from "../support/smtp.js"
import { workersSettled } from "../support/workerRounds.js"
import { eventually } from "../support/world.js"
import { orgApi } from "../Webhooks/support.js"

/**
 * The once-per rules, end to end: the ledger (the money area's service, run against the
 * suite's database) emits the events, and each reaches the org's webhook endpoint and its
 * owner's mailbox exactly as many times as the rule allows.
 */
let db: TestDatabase
let server: TestServer
let smtp: TestSmtp
let receiver: TestReceiver
let clock: ShiftableClock
let ledger: ManagedRuntime.ManagedRuntime<Ledger | LedgerMaintenance, unknown>

beforeAll(async () => {
  db = await createTestDatabase("events_once")
  smtp = await startSmtp()
  receiver = await startReceiver()
  clock = makeShiftableClock()
  server = await startServer({ DATABASE_URL: db.url, SMTP_URL: smtp.url }, clock.layer)
  ledger = ManagedRuntime.make(
    LedgerStandaloneLive.pipe(
      Layer.provide(PgClient.layer({ url: Redacted.make(db.url), maxConnections: 2 })),
      Layer.provide(Layer.setConfigProvider(ConfigProvider.fromMap(new Map([["PORT", "0"]])))),
      Layer.provide(clock.layer)
    )
  )
})

afterAll(async () => {
  await ledger?.dispose()
  await server?.close()
  await receiver?.close()
  await smtp?.close()
  await db?.drop()
})

const run = <A, E>(effect: Effect.Effect<A, E, Ledger | LedgerMaintenance>) => ledger.runPromise(effect)

/** A live purchase of `credits`: hold then capture. */
const spend = (orgId: OrgId, agentId: AgentId, credits: bigint, testMode = false) =>
  run(Effect.gen(function*() {
    const l = yield* Ledger
    const hold = yield* l.hold({
      orgId,
      agentId,
      amount: credits,
      purpose: "purchase_item",
      reference: randomUUID(),
      testMode
    })
    yield* l.capture(hold.id, credits)
  }))

const topUp = (orgId: OrgId, credits: bigint) =>
  run(Effect.flatMap(Ledger, (l) => l.credit(orgId, credits, "top_up", "test top-up")))

const orgWithEndpoint = async () => {
  const org = await seedOrg(db)
  const api = orgApi(server.url, org.orgId, org.owner.sessionToken)
  const made = await api.createWebhook({ url: receiver.url.replace("/hook", `/once-${org.orgId}`) })
  expect(made.status).toBe(201)
  return { ...org, api }
}

const received = (orgId: string, type: string) =>
  receiver.received.filter((r) => r.path === `/once-${orgId}` && r.headers["service-event-type"] === type)

const mails = (email: string, pattern: RegExp) =>
  smtp.messages.filter((m) => m.to.includes(email) && pattern.test(m.subject))

/** Waits until the workers have finished whatever is due. */
const settle = () => workersSettled(["webhook worker", "mail worker"])

describe("once-per rules, delivered and mailed", () => {
  it("balance.low: once per top-up, at the org's low_balance_usd", async () => {
    const org = await orgWithEndpoint()
    const agent = await seedAgent(db, org.orgId, {
      mode: "live",
      monthlyBudgetCredits: 1_000_000n,
      approvalThresholdCredits: null
    })
    expect((await org.api.setNotifications({ low_balance_usd: 3 })).status).toBe(200)
    await topUp(org.orgId, 4_000n)
    await spend(org.orgId, agent.agentId, 500n) // 3500: above $3
    await settle()
    expect(received(org.orgId, "balance.low")).toHaveLength(0)
    await spend(org.orgId, agent.agentId, 600n) // 2900: under $3, first time
    await spend(org.orgId, agent.agentId, 100n) // 2800: no second alert
    await eventually(() => (received(org.orgId, "balance.low").length === 1 ? true : undefined))
    await settle()
    expect(received(org.orgId, "balance.low")).toHaveLength(1)
    expect(JSON.parse(received(org.orgId, "balance.low")[0]!.body).data).toEqual({
      balance_credits: "2900",
      balance_usd: "2.900"
    })
    expect(mails(org.owner.email, /Credit balance low/)).toHaveLength(1)

    await topUp(org.orgId, 50n) // 2850: a top-up arms the alert again
    await spend(org.orgId, agent.agentId, 50n) // 2800: under the alert, second time
    await eventually(() => (received(org.orgId, "balance.low").length === 2 ? true : undefined))
    await spend(org.orgId, agent.agentId, 50n)
    await settle()
    expect(received(org.orgId, "balance.low")).toHaveLength(2)
    await eventually(() => (mails(org.owner.email, /Credit balance low/).length === 2 ? true : undefined))
    const events = await org.api.events("?type=balance.low")
    expect(events.json.events.map((e: any) => e.data.balance_credits)).toEqual(["2800", "2900"])
  })

  it("budget.80pct: once per live agent per month, never for a test agent", async () => {
    const org = await orgWithEndpoint()
    await topUp(org.orgId, 100_000n)
    const live = await seedAgent(db, org.orgId, {
      mode: "live",
      name: "Live one",
      monthlyBudgetCredits: 1_000n,
      approvalThresholdCredits: null
    })
    const other = await seedAgent(db, org.orgId, {
      mode: "live",
      name: "Other",
      monthlyBudgetCredits: 1_000n,
      approvalThresholdCredits: null
    })
    const test = await seedAgent(db, org.orgId, {
      mode: "test",
      name: "Test one",
      monthlyBudgetCredits: 1_000n,
      approvalThresholdCredits: null
    })
    await spend(org.orgId, live.agentId, 700n)
    await settle()
    expect(received(org.orgId, "budget.80pct")).toHaveLength(0)
    await spend(org.orgId, live.agentId, 100n) // 800 of 1000
    await spend(org.orgId, live.agentId, 100n) // 900: no second alert this month
    await spend(org.orgId, other.agentId, 850n) // the other agent has its own
    await spend(org.orgId, test.agentId, 900n, true) // test agents are not alerted
    await eventually(() => (received(org.orgId, "budget.80pct").length === 2 ? true : undefined))
    await settle()
    const alerts = received(org.orgId, "budget.80pct").map((r) => JSON.parse(r.body).data)
    expect(alerts).toHaveLength(2)
    expect(alerts.find((d) => d.agent_id === live.agentId)).toEqual({
      agent_id: live.agentId,
      agent_name: "Live one",
      spent_credits: "800",
      budget_credits: "1000"
    })
    expect(alerts.find((d) => d.agent_id === other.agentId)).toMatchObject({ spent_credits: "850" })
    await eventually(() => (mails(org.owner.email, /80% of its monthly budget/).length === 2 ? true : undefined))

    // A new calendar month (UTC) starts a new budget: the live agent may be alerted again.
    const now = new Date(clock.now())
    const nextMonth = Date.UTC(now.getUTCFullYear(), now.getUTCMonth() + 1, 1, 0, 1)
    clock.advance(nextMonth - clock.now())
    await spend(org.orgId, live.agentId, 800n)
    await eventually(() => (received(org.orgId, "budget.80pct").length === 3 ? true : undefined))
    await spend(org.orgId, live.agentId, 100n)
    await settle()
    expect(received(org.orgId, "budget.80pct")).toHaveLength(3)
  })

  it("trial.expiring: once per grant, when trial credits expire within 7 days", async () => {
    const org = await orgWithEndpoint()
    await run(Effect.flatMap(Ledger, (l) => l.grantTrial(org.orgId)))
    const notify = () => run(Effect.flatMap(LedgerMaintenance, (m) => m.notifyExpiringTrials))
    await notify()
    await settle()
    expect(received(org.orgId, "trial.expiring")).toHaveLength(0)
    // 24 days on, the 30-day trial ends within 7 days.
    clock.advance(24 * 86_400_000)
    await notify()
    await notify()
    await eventually(() => (received(org.orgId, "trial.expiring").length === 1 ? true : undefined))
    // Let the owner mail go out before the clock jumps a day: a jump during the send would
    // outlast the mail worker's lease and send it again, which is not what this test is about.
    await eventually(async () => {
      const rows = await db.query(`SELECT 1 FROM mail_outbox WHERE to_address = $1 AND status = 'pending'`, [
        org.owner.email
      ])
      return rows.length === 0 && mails(org.owner.email, /Your trial credits expire on/).length === 1 ? true : undefined
    })
    clock.advance(86_400_000)
    await notify()
    await settle()
    expect(received(org.orgId, "trial.expiring")).toHaveLength(1)
    expect(JSON.parse(received(org.orgId, "trial.expiring")[0]!.body).data).toMatchObject({ credits: "5000" })
    await eventually(() => (mails(org.owner.email, /Your trial credits expire on/).length === 1 ? true : undefined))
    await settle()
    expect(mails(org.owner.email, /Your trial credits expire on/)).toHaveLength(1)
  })
})
