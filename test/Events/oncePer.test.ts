import { expect, layer } from "@effect/vitest"
import { Effect, Layer } from "effect"
import { randomUUID } from "node:crypto"
import { AgentId, OrgId } from "../../src/Domain/Ids.js"
import { Events } from "../../src/Services/Events/Events.js"
import { Ledger } from "../../src/Services/Ledger/Ledger.js"
import { LedgerMaintenance } from "../../src/Services/Ledger/LedgerMaintenance.js"
import { LedgerStandaloneLive } from "../../src/Services/Ledger/LedgerStandalone.js"
import { MailerLive } from "../../src/Services/Mailer/Mailer.js"
import { MailWorkerLive } from "../../src/Services/Mailer/MailWorker.js"
import { Notifications } from "../../src/Services/Notifications/Notifications.js"
import { WebhookWorkerLive } from "../../src/Services/Webhooks/Delivery.js"
import { Webhooks } from "../../src/Services/Webhooks/Webhooks.js"
import { eventually, eventuallyEffect } from "../support/eventually.js"
import { actorOf, seedAgent, seedOrg } from "../support/fixtures.js"
import { makeShiftableClock } from "../support/shiftableClock.js"
import { inShiftedTime, Receiver, serviceTier, SmtpServer, startWorkers, SuiteDatabase } from "../support/testLayers.js"
import { workersSettled } from "../support/workerRounds.js"

/**
 * The once-per rules, on the services and without HTTP: the ledger (with its maintenance)
 * emits the events, and the webhook and mail workers as the server runs them deliver each to
 * the org's webhook endpoint and mail it to its owner exactly as many times as the rule allows.
 * Time is a clock the test moves forward (the real time plus an offset, sleeps real), for the
 * ledger and the workers alike; the suite's runtime keeps its TestClock.
 */
const clock = makeShiftableClock()
const shifted = inShiftedTime(clock)

/** The server's two delivering workers, the mail going to the suite's SMTP server. */
const deliveringWorkers = Effect.gen(function*() {
  const smtp = yield* SmtpServer
  yield* startWorkers(Layer.merge(WebhookWorkerLive, MailWorkerLive.pipe(Layer.provide(MailerLive))), {
    SMTP_URL: smtp.url,
    MAIL_FROM: "Service <no-reply@service.test>"
  })
})

/** A live purchase of `credits`: hold then capture. */
const spend = (orgId: string, agentId: string, credits: bigint, testMode = false) =>
  Effect.gen(function*() {
    const ledger = yield* Ledger
    const hold = yield* ledger.hold({
      orgId: OrgId.make(orgId),
      agentId: AgentId.make(agentId),
      amount: credits,
      purpose: "purchase_item",
      reference: randomUUID(),
      testMode
    })
    yield* ledger.capture(hold.id, credits)
  }).pipe(Effect.orDie)

const topUp = (orgId: string, credits: bigint) =>
  Effect.flatMap(Ledger, (l) => l.credit(OrgId.make(orgId), credits, "top_up", "test top-up")).pipe(Effect.orDie)

/** An org with one owner and a webhook endpoint at its own path of the receiver. */
const orgWithEndpoint = Effect.gen(function*() {
  const db = yield* SuiteDatabase
  const receiver = yield* Receiver
  const org = yield* Effect.promise(() => seedOrg(db))
  const actor = actorOf(org)
  yield* (yield* Webhooks).create(actor, { url: receiver.url.replace("/hook", `/once-${org.orgId}`) })
  return { ...org, actor }
})

/** What the receiver got for the org, of one type. */
const received = (orgId: string, type: string) =>
  Effect.map(
    Receiver,
    (receiver) =>
      receiver.received.filter((r) => r.path === `/once-${orgId}` && r.headers["service-event-type"] === type)
  )

const mails = (email: string, pattern: RegExp) =>
  Effect.map(SmtpServer, (smtp) => smtp.messages.filter((m) => m.to.includes(email) && pattern.test(m.subject)))

/** Polls (in real time) until `effect` answers `count` things. */
const untilCount = <A, E, R>(effect: Effect.Effect<ReadonlyArray<A>, E, R>, count: number, what: string) =>
  eventuallyEffect(Effect.map(effect, (found) => found.length === count), { what })

/** Waits until the workers have finished whatever is due. */
const settle = Effect.promise(() => workersSettled(["webhook worker", "mail worker"]))

layer(
  serviceTier(
    "events_once",
    Layer.mergeAll(Webhooks.Default, Notifications.Default, LedgerStandaloneLive).pipe(
      Layer.provideMerge(Events.Default)
    )
  ).pipe(Layer.provideMerge(Layer.merge(SmtpServer.Test, Receiver.Test)))
)((it) => {
  it.scoped("balance.low: once per top-up, at the org's low_balance_usd", () =>
    shifted(Effect.gen(function*() {
      const db = yield* SuiteDatabase
      yield* deliveringWorkers
      const org = yield* orgWithEndpoint
      const agent = yield* Effect.promise(() =>
        seedAgent(db, org.orgId, { mode: "live", monthlyBudgetCredits: 1_000_000n, approvalThresholdCredits: null })
      )
      yield* (yield* Notifications).update(org.actor, { low_balance_usd: 3 })
      const lows = received(org.orgId, "balance.low")
      yield* topUp(org.orgId, 4_000n)
      yield* spend(org.orgId, agent.agentId, 500n) // 3500: above $3
      yield* settle
      expect(yield* lows).toHaveLength(0)
      yield* spend(org.orgId, agent.agentId, 600n) // 2900: under $3, first time
      yield* spend(org.orgId, agent.agentId, 100n) // 2800: no second alert
      yield* untilCount(lows, 1, "the first alert")
      yield* settle
      expect(yield* lows).toHaveLength(1)
      expect(JSON.parse((yield* lows)[0]!.body).data).toEqual({ balance_credits: "2900", balance_usd: "2.900" })
      expect(yield* mails(org.owner.email, /Credit balance low/)).toHaveLength(1)

      yield* topUp(org.orgId, 50n) // 2850: a top-up arms the alert again
      yield* spend(org.orgId, agent.agentId, 50n) // 2800: under the alert, second time
      yield* untilCount(lows, 2, "the second alert")
      yield* spend(org.orgId, agent.agentId, 50n)
      yield* settle
      expect(yield* lows).toHaveLength(2)
      yield* untilCount(mails(org.owner.email, /Credit balance low/), 2, "the second mail")
      const events = yield* (yield* Events).list(OrgId.make(org.orgId), { type: "balance.low", limit: 20 })
      expect(events.events.map((e: any) => e.data.balance_credits)).toEqual(["2800", "2900"])
    })))

  it.scoped("budget.80pct: once per live agent per month, never for a test agent", () =>
    shifted(Effect.gen(function*() {
      const db = yield* SuiteDatabase
      yield* deliveringWorkers
      const org = yield* orgWithEndpoint
      yield* topUp(org.orgId, 100_000n)
      const agent = (mode: "live" | "test", name: string) =>
        Effect.promise(() =>
          seedAgent(db, org.orgId, { mode, name, monthlyBudgetCredits: 1_000n, approvalThresholdCredits: null })
        )
      const live = yield* agent("live", "Live one")
      const other = yield* agent("live", "Other")
      const test = yield* agent("test", "Test one")
      const alerted = received(org.orgId, "budget.80pct")
      yield* spend(org.orgId, live.agentId, 700n)
      yield* settle
      expect(yield* alerted).toHaveLength(0)
      yield* spend(org.orgId, live.agentId, 100n) // 800 of 1000
      yield* spend(org.orgId, live.agentId, 100n) // 900: no second alert this month
      yield* spend(org.orgId, other.agentId, 850n) // the other agent has its own
      yield* spend(org.orgId, test.agentId, 900n, true) // test agents are not alerted
      yield* untilCount(alerted, 2, "two alerts")
      yield* settle
      const alerts = (yield* alerted).map((r) => JSON.parse(r.body).data)
      expect(alerts).toHaveLength(2)
      expect(alerts.find((d) => d.agent_id === live.agentId)).toEqual({
        agent_id: live.agentId,
        agent_name: "Live one",
        spent_credits: "800",
        budget_credits: "1000"
      })
      expect(alerts.find((d) => d.agent_id === other.agentId)).toMatchObject({ spent_credits: "850" })
      yield* untilCount(mails(org.owner.email, /80% of its monthly budget/), 2, "two mails")

      // A new calendar month (UTC) starts a new budget: the live agent may be alerted again.
      const now = new Date(clock.now())
      const nextMonth = Date.UTC(now.getUTCFullYear(), now.getUTCMonth() + 1, 1, 0, 1)
      clock.advance(nextMonth - clock.now())
      yield* spend(org.orgId, live.agentId, 800n)
      yield* untilCount(alerted, 3, "the next month's alert")
      yield* spend(org.orgId, live.agentId, 100n)
      yield* settle
      expect(yield* alerted).toHaveLength(3)
    })))

  it.scoped("trial.expiring: once per grant, when trial credits expire within 7 days", () =>
    shifted(Effect.gen(function*() {
      const db = yield* SuiteDatabase
      yield* deliveringWorkers
      const org = yield* orgWithEndpoint
      yield* (yield* Ledger).grantTrial(OrgId.make(org.orgId))
      const notify = Effect.flatMap(LedgerMaintenance, (m) => m.notifyExpiringTrials).pipe(Effect.orDie)
      const expiring = received(org.orgId, "trial.expiring")
      const trialMails = mails(org.owner.email, /Your trial credits expire on/)
      yield* notify
      yield* settle
      expect(yield* expiring).toHaveLength(0)
      // 24 days on, the 30-day trial ends within 7 days.
      clock.advance(24 * 86_400_000)
      yield* notify
      yield* notify
      yield* untilCount(expiring, 1, "the trial alert")
      // Let the owner mail go out before the clock jumps a day: a jump during the send would
      // outlast the mail worker's lease and send it again, which is not what this test is about.
      yield* Effect.promise(() =>
        eventually(async () => {
          const rows = await db.query(`SELECT 1 FROM mail_outbox WHERE to_address = $1 AND status = 'pending'`, [
            org.owner.email
          ])
          return rows.length === 0
        }, { what: "the owner mail sent" })
      )
      yield* untilCount(trialMails, 1, "the trial mail")
      clock.advance(86_400_000)
      yield* notify
      yield* settle
      expect(yield* expiring).toHaveLength(1)
      expect(JSON.parse((yield* expiring)[0]!.body).data).toMatchObject({ credits: "5000" })
      yield* untilCount(trialMails, 1, "the trial mail")
      yield* settle
      expect(yield* trialMails).toHaveLength(1)
    })))
})
