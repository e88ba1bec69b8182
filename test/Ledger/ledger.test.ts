import { NodeContext } from "@effect/platform-node"
import { SqlClient } from "@effect/sql"
import { PgClient } from "@effect/sql-pg"
import { describe, expect, it } from "@effect/vitest"
import { ConfigProvider, Data, Duration, Effect, Exit, Layer, ManagedRuntime, Redacted, TestClock } from "effect"
import { randomUUID } from "node:crypto"
import { afterAll, beforeAll } from "vitest"
import { type AgentId, HoldId, type OrgId } from "../../src/Domain/Ids.js"
import { trialTerms } from "../../src/Domain/Plans.js"
import { MigrationsLive } from "../../src/Layers/Migrations.js"
import { Ledger } from "../../src/Services/Ledger/Ledger.js"
import { LedgerMaintenance } from "../../src/Services/Ledger/LedgerMaintenance.js"
import { LedgerStandaloneLive } from "../../src/Services/Ledger/LedgerStandalone.js"
import { createTestDatabase, type TestDatabase } from "../support/database.js"
import { seedAgent, seedOrg } from "../support/fixtures.js"
import { invariants } from "../support/ledgerChecks.js"

/**
 * The ledger as a service on real PostgreSQL, time from TestClock: every rule and error of
 * holds, captures, releases, refunds and credits, the events money causes, trial expiry
 * and the hold sweeper.
 */
let db: TestDatabase

beforeAll(async () => {
  db = await createTestDatabase("ledger")
  const migrate = ManagedRuntime.make(
    MigrationsLive.pipe(
      Layer.provide(PgClient.layer({ url: Redacted.make(db.url), maxConnections: 1 })),
      Layer.provide(NodeContext.layer)
    )
  )
  await migrate.runPromise(Effect.void)
  await migrate.dispose()
})

afterAll(async () => {
  await db?.drop()
})

const LedgerTest = () =>
  LedgerStandaloneLive.pipe(
    Layer.provideMerge(PgClient.layer({ url: Redacted.make(db.url), maxConnections: 4 })),
    Layer.provide(Layer.setConfigProvider(ConfigProvider.fromMap(new Map())))
  )

const run = <A, E>(effect: Effect.Effect<A, E, Ledger | LedgerMaintenance | SqlClient.SqlClient>) =>
  Effect.provide(effect, LedgerTest())

const promise = <A>(thunk: () => Promise<A>) => Effect.promise(thunk)

class CallerFailed extends Data.TaggedError("CallerFailed") {}

const setup = (options: { credits?: bigint; budget?: bigint; mode?: "test" | "live"; trial?: boolean } = {}) =>
  Effect.gen(function*() {
    const ledger = yield* Ledger
    const org = yield* promise(() => seedOrg(db))
    const agent = yield* promise(() =>
      seedAgent(db, org.orgId, {
        mode: options.mode ?? "live",
        monthlyBudgetCredits: options.budget ?? 50_000n,
        name: "Scout"
      })
    )
    if (options.trial) yield* ledger.grantTrial(org.orgId)
    if (options.credits !== undefined) yield* ledger.credit(org.orgId, options.credits, "top_up", "test")
    return { orgId: org.orgId, agentId: agent.agentId }
  })

const holdFor = (orgId: OrgId, agentId: AgentId, amount: bigint, testMode = false) =>
  Effect.flatMap(
    Ledger,
    (ledger) => ledger.hold({ orgId, agentId, amount, purpose: "test", reference: randomUUID(), testMode })
  )

const eventsOf = (orgId: string, type: string) =>
  promise(() => db.query(`SELECT data FROM events WHERE org_id = $1 AND type = $2 ORDER BY seq`, [orgId, type]))

const errorCode = <A, E extends { _tag: string }, R>(effect: Effect.Effect<A, E, R>) =>
  Effect.map(
    Effect.exit(effect),
    (exit) => Exit.isFailure(exit) && exit.cause._tag === "Fail" ? exit.cause.error._tag : "ok"
  )

const checkInvariants = (orgId: string) =>
  Effect.gen(function*() {
    const inv = yield* promise(() => invariants(db, orgId))
    expect(inv.entriesSum).toBe(inv.balance)
    expect(inv.negativeBudgets).toBe(0)
    expect(inv.mismatchedHolds).toBe(0)
    return inv
  })

describe("Ledger", () => {
  it.effect("holds, captures for less and releases the rest; the entries always sum to the balance", () =>
    run(Effect.gen(function*() {
      const ledger = yield* Ledger
      const { agentId, orgId } = yield* setup({ credits: 1_000n })
      const hold = yield* holdFor(orgId, agentId, 100n)
      expect((yield* ledger.orgCredits(orgId)).balance).toBe(900n)
      expect(yield* ledger.agentMonthSpend(agentId)).toBe(100n)
      expect(yield* ledger.capture(hold.id, 60n)).toEqual({ captured: 60n, released: 40n })
      expect((yield* ledger.orgCredits(orgId)).balance).toBe(940n)
      expect(yield* ledger.agentMonthSpend(agentId)).toBe(60n)
      const second = yield* holdFor(orgId, agentId, 50n)
      expect(yield* ledger.release(second.id)).toEqual({ captured: 0n, released: 50n })
      expect((yield* ledger.orgCredits(orgId)).balance).toBe(940n)
      const kinds = yield* promise(() =>
        db.query(`SELECT kind, amount, credits FROM ledger_entries WHERE org_id = $1 ORDER BY seq`, [orgId])
      )
      expect(kinds.map((e: any) => [e.kind, e.amount, e.credits])).toEqual([
        ["top_up", "1000", "1000"],
        ["hold", "-100", "100"],
        ["capture", "0", "60"],
        ["release", "40", "40"],
        ["hold", "-50", "50"],
        ["release", "50", "50"]
      ])
      yield* checkInvariants(orgId)
    })))

  it.effect("answers each rule's error", () =>
    run(Effect.gen(function*() {
      const ledger = yield* Ledger
      const { agentId, orgId } = yield* setup({ credits: 100n, budget: 150n })
      expect(yield* errorCode(holdFor(orgId, agentId, 0n))).toBe("invalid_amount")
      expect(yield* errorCode(holdFor(orgId, agentId, -5n))).toBe("invalid_amount")
      expect(yield* errorCode(holdFor(orgId, agentId, 101n))).toBe("insufficient_credits")
      const hold = yield* holdFor(orgId, agentId, 80n)
      expect(yield* errorCode(holdFor(orgId, agentId, 71n))).toBe("over_budget")
      expect(yield* errorCode(ledger.capture(hold.id, 0n))).toBe("invalid_amount")
      expect(yield* errorCode(ledger.capture(hold.id, 81n))).toBe("capture_exceeds_hold")
      expect(yield* errorCode(ledger.capture(HoldId.make(randomUUID()), 1n))).toBe("not_a_hold")
      expect(yield* errorCode(ledger.release(HoldId.make(randomUUID())))).toBe("not_a_hold")
      // An entry that is not a hold (the top-up) cannot be settled.
      const [topUp] = yield* promise(() =>
        db.query(`SELECT id FROM ledger_entries WHERE org_id = $1 AND kind = 'top_up'`, [orgId])
      )
      expect(yield* errorCode(ledger.capture(topUp.id, 1n))).toBe("not_a_hold")
      yield* ledger.capture(hold.id, 80n)
      expect(yield* errorCode(ledger.capture(hold.id, 80n))).toBe("already_settled")
      expect(yield* errorCode(ledger.release(hold.id))).toBe("already_settled")
      expect(yield* errorCode(ledger.credit(orgId, 0n, "top_up", "x"))).toBe("invalid_amount")
      // Refunds: up to what was charged, positive, only of holds.
      expect(yield* errorCode(ledger.refund(hold.id, 0n, "x"))).toBe("invalid_amount")
      expect(yield* errorCode(ledger.refund(hold.id, 81n, "x"))).toBe("capture_exceeds_hold")
      expect(yield* errorCode(ledger.refund(HoldId.make(randomUUID()), 1n, "x"))).toBe("not_a_hold")
      expect(yield* ledger.refund(hold.id, 30n, "dispute upheld")).toEqual({ refunded: 30n })
      expect(yield* errorCode(ledger.refund(hold.id, 51n, "x"))).toBe("capture_exceeds_hold")
      expect((yield* ledger.orgCredits(orgId)).balance).toBe(50n)
      expect(yield* ledger.agentMonthSpend(agentId)).toBe(50n)
      // Frozen: holds refused, reads work.
      yield* ledger.setFrozen(orgId, true)
      expect(yield* errorCode(holdFor(orgId, agentId, 1n))).toBe("credits_frozen")
      expect((yield* ledger.orgCredits(orgId)).frozen).toBe(true)
      yield* ledger.setFrozen(orgId, false)
      expect(yield* errorCode(holdFor(orgId, agentId, 1n))).toBe("ok")
      yield* checkInvariants(orgId)
    })))

  it.effect("holds many requests in one statement, each checked on its own in order, in both modes", () =>
    run(Effect.gen(function*() {
      const ledger = yield* Ledger
      const sql = yield* SqlClient.SqlClient
      for (const mode of ["test", "live"] as const) {
        const { agentId, orgId } = yield* setup({ credits: 1_000n, budget: 700n, mode })
        const testMode = mode === "test"
        const newIds = (count: number) => Array.from({ length: count }, () => HoldId.make(randomUUID()))
        const request = (ids: ReadonlyArray<HoldId>, budgetApproved = false) => ({
          orgId,
          agentId,
          amount: 100n,
          purpose: "test",
          testMode,
          budgetApproved,
          references: ids.map(() => randomUUID()),
          ids
        })
        const openHolds = () =>
          Effect.map(
            promise(() =>
              db.query(`SELECT count(*)::int AS n FROM ledger_holds WHERE org_id = $1 AND status = 'held'`, [orgId])
            ),
            (rows) => rows[0].n as number
          )
        // In a transaction the caller then fails: nothing stays.
        const rolledBack = yield* Effect.exit(sql.withTransaction(
          Effect.zipRight(ledger.holdTogether([request(newIds(2))]), Effect.fail(new CallerFailed()))
        ))
        expect(Exit.isFailure(rolledBack)).toBe(true)
        expect(yield* openHolds()).toBe(0)
        // Each request sees what the ones before it took: 300 held, then 800 more is over the
        // 700 budget (all of it refused), then 200 more fits; live, 11 approved pass the budget
        // but not the balance.
        const [first, over, fits, ...rest] = [newIds(3), newIds(8), newIds(2), newIds(11)]
        const answers = yield* ledger.holdTogether([
          request(first),
          request(over),
          request(fits),
          ...(testMode ? [] : [request(rest[0]!, true)])
        ])
        const codes = answers.map((answer) => answer._tag === "Right" ? "held" : answer.left._tag)
        expect(codes).toEqual(["held", "over_budget", "held", ...(testMode ? [] : ["insufficient_credits"])])
        // The holds have the caller's ids.
        expect(answers[0]!._tag === "Right" && answers[0]!.right.map((hold) => hold.id)).toEqual(first)
        expect(yield* openHolds()).toBe(5)
        expect(yield* ledger.agentMonthSpend(agentId)).toBe(500n)
        expect((yield* ledger.orgCredits(orgId)).balance).toBe(testMode ? 1_000n : 500n)
        yield* checkInvariants(orgId)
      }
    })))

  it.effect("holds several together, all or none, the checks on their sum", () =>
    run(Effect.gen(function*() {
      const ledger = yield* Ledger
      const { agentId, orgId } = yield* setup({ credits: 1_000n, budget: 700n })
      const many = (count: number, amount: bigint, testMode = false) =>
        ledger.holdMany(
          { orgId, agentId, amount, purpose: "test", testMode },
          Array.from({ length: count }, () => randomUUID())
        )
      const openHolds = () =>
        Effect.map(
          promise(() =>
            db.query(`SELECT count(*)::int AS n FROM ledger_holds WHERE org_id = $1 AND status = 'held'`, [orgId])
          ),
          (rows) => rows[0].n as number
        )
      // Over the budget by their sum (each alone would fit): none is held.
      expect(yield* errorCode(many(8, 100n))).toBe("over_budget")
      expect(yield* openHolds()).toBe(0)
      const references = Array.from({ length: 5 }, () => randomUUID())
      const holds = yield* ledger.holdMany(
        { orgId, agentId, amount: 100n, purpose: "test", testMode: false },
        references
      )
      expect(holds.map((hold) => hold.amount)).toEqual([100n, 100n, 100n, 100n, 100n])
      expect(new Set(holds.map((hold) => hold.id)).size).toBe(5)
      const rows = yield* promise(() =>
        db.query(`SELECT id, reference FROM ledger_holds WHERE org_id = $1 AND status = 'held'`, [orgId])
      )
      expect(new Map(rows.map((row: any) => [row.id, row.reference]))).toEqual(
        new Map(holds.map((hold, i) => [hold.id, references[i]]))
      )
      expect((yield* ledger.orgCredits(orgId)).balance).toBe(500n)
      expect(yield* ledger.agentMonthSpend(agentId)).toBe(500n)
      // The balance cannot cover their sum (an approved purchase skips the budget): none held.
      const approved = (count: number, amount: bigint) =>
        ledger.holdMany(
          { orgId, agentId, amount, purpose: "test", testMode: false, budgetApproved: true },
          Array.from({ length: count }, () => randomUUID())
        )
      expect(yield* errorCode(approved(2, 251n))).toBe("insufficient_credits")
      expect(yield* openHolds()).toBe(5)
      // A refused hold leaves no row at all: all of its checks ran before anything was written.
      const all = yield* promise(() =>
        db.query(`SELECT count(*)::int AS n FROM ledger_holds WHERE org_id = $1`, [orgId])
      )
      expect(all[0].n).toBe(5)
      expect(yield* ledger.agentMonthSpend(agentId)).toBe(500n)
      expect((yield* ledger.orgCredits(orgId)).balance).toBe(500n)
      // Each hold settles on its own.
      expect(yield* ledger.capture(holds[0]!.id, 100n)).toEqual({ captured: 100n, released: 0n })
      expect(yield* ledger.release(holds[1]!.id)).toEqual({ captured: 0n, released: 100n })
      expect((yield* ledger.orgCredits(orgId)).balance).toBe(600n)
      expect(yield* errorCode(many(0, 100n))).toBe("ok")
      expect(yield* errorCode(many(2, 0n))).toBe("invalid_amount")
      yield* ledger.setFrozen(orgId, true)
      expect(yield* errorCode(many(2, 1n))).toBe("credits_frozen")
      yield* ledger.setFrozen(orgId, false)
      yield* checkInvariants(orgId)
      // A test agent's holds count toward its budget only, together.
      const tester = yield* promise(() => seedAgent(db, orgId, { mode: "test", monthlyBudgetCredits: 300n }))
      const testMany = (count: number) =>
        ledger.holdMany(
          { orgId, agentId: tester.agentId, amount: 100n, purpose: "test", testMode: true },
          Array.from({ length: count }, () => randomUUID())
        )
      expect(yield* errorCode(testMany(4))).toBe("over_budget")
      expect(yield* Effect.map(testMany(3), (held) => held.length)).toBe(3)
      expect(yield* ledger.agentMonthSpend(tester.agentId)).toBe(300n)
      expect((yield* ledger.orgCredits(orgId)).balance).toBe(600n)
    })))

  it.effect("test mode counts toward the budget and never moves credits", () =>
    run(Effect.gen(function*() {
      const ledger = yield* Ledger
      const { agentId, orgId } = yield* setup({ mode: "test", budget: 100n })
      const hold = yield* holdFor(orgId, agentId, 70n, true)
      yield* ledger.capture(hold.id, 70n)
      expect(yield* ledger.agentMonthSpend(agentId)).toBe(70n)
      expect(yield* errorCode(holdFor(orgId, agentId, 31n, true))).toBe("over_budget")
      expect((yield* ledger.orgCredits(orgId)).balance).toBe(0n)
      const entries = yield* promise(() => db.query(`SELECT 1 FROM ledger_entries WHERE org_id = $1`, [orgId]))
      expect(entries).toHaveLength(0)
      // Test agents never raise budget.80pct.
      expect(yield* eventsOf(orgId, "budget.80pct")).toHaveLength(0)
    })))

  it.effect("monthly budgets reset at the calendar month in UTC", () =>
    run(Effect.gen(function*() {
      const ledger = yield* Ledger
      yield* TestClock.setTime(Date.parse("2026-03-31T23:59:00.000Z"))
      const { agentId, orgId } = yield* setup({ credits: 1_000n, budget: 100n })
      yield* Effect.flatMap(holdFor(orgId, agentId, 100n), (h) => ledger.capture(h.id, 100n))
      expect(yield* errorCode(holdFor(orgId, agentId, 1n))).toBe("over_budget")
      yield* TestClock.adjust(Duration.minutes(1))
      expect(yield* ledger.agentMonthSpend(agentId)).toBe(0n)
      expect(yield* errorCode(holdFor(orgId, agentId, 100n))).toBe("ok")
    })))

  it.effect("budget.80pct once per live agent per month, with its data", () =>
    run(Effect.gen(function*() {
      const ledger = yield* Ledger
      yield* TestClock.setTime(Date.parse("2026-05-10T12:00:00.000Z"))
      const { agentId, orgId } = yield* setup({ credits: 10_000n, budget: 1_000n })
      const spend = (amount: bigint) =>
        Effect.flatMap(holdFor(orgId, agentId, amount), (h) => ledger.capture(h.id, amount))
      yield* spend(700n)
      expect(yield* eventsOf(orgId, "budget.80pct")).toHaveLength(0)
      yield* spend(150n)
      yield* spend(100n)
      const events = yield* eventsOf(orgId, "budget.80pct")
      expect(events.map((e: any) => e.data)).toEqual([
        { agent_id: agentId, agent_name: "Scout", spent_credits: "850", budget_credits: "1000" }
      ])
      yield* TestClock.setTime(Date.parse("2026-06-01T00:00:00.000Z"))
      yield* spend(900n)
      expect(yield* eventsOf(orgId, "budget.80pct")).toHaveLength(2)
    })))

  it.effect("balance.low when the balance falls under the org's alert, once per top-up", () =>
    run(Effect.gen(function*() {
      const ledger = yield* Ledger
      const { agentId, orgId } = yield* setup({ credits: 6_000n, budget: 100_000n })
      const spend = (amount: bigint) =>
        Effect.flatMap(holdFor(orgId, agentId, amount), (h) => ledger.capture(h.id, amount))
      yield* spend(1_000n)
      expect(yield* eventsOf(orgId, "balance.low")).toHaveLength(0)
      // A released hold spends nothing and raises nothing.
      yield* Effect.flatMap(holdFor(orgId, agentId, 2_000n), (h) => ledger.release(h.id))
      expect(yield* eventsOf(orgId, "balance.low")).toHaveLength(0)
      yield* spend(1n)
      yield* spend(1n)
      expect((yield* eventsOf(orgId, "balance.low")).map((e: any) => e.data)).toEqual([
        { balance_credits: "4999", balance_usd: "4.999" }
      ])
      // A top-up arms the alert again; it fires at the next spend that leaves the balance under it.
      yield* ledger.credit(orgId, 1n, "top_up", "small top-up")
      yield* spend(1n)
      yield* spend(1n)
      expect((yield* eventsOf(orgId, "balance.low")).map((e: any) => e.data.balance_credits)).toEqual(["4999", "4998"])
      yield* checkInvariants(orgId)
    })))

  it.effect("trial: granted once, 50 credits an hour until the first top-up, expiring notice, expiry", () =>
    run(Effect.gen(function*() {
      const ledger = yield* Ledger
      const maintenance = yield* LedgerMaintenance
      yield* TestClock.setTime(Date.parse("2026-07-01T10:00:00.000Z"))
      const { agentId, orgId } = yield* setup({ trial: true })
      yield* ledger.grantTrial(orgId)
      expect(yield* ledger.orgCredits(orgId)).toEqual({ balance: trialTerms.credits, frozen: false, funded: false })
      const spend = (amount: bigint) =>
        Effect.flatMap(holdFor(orgId, agentId, amount), (h) => ledger.capture(h.id, amount))
      yield* spend(30n)
      yield* spend(20n)
      expect(yield* errorCode(holdFor(orgId, agentId, 1n))).toBe("trial_limit")
      yield* TestClock.adjust(Duration.hours(1))
      const open = yield* holdFor(orgId, agentId, 50n)
      yield* ledger.release(open.id)
      yield* spend(40n)
      expect(yield* errorCode(holdFor(orgId, agentId, 11n))).toBe("trial_limit")
      // 23 days in: nothing expires within 7 days yet.
      yield* TestClock.adjust(Duration.days(22))
      expect(yield* maintenance.notifyExpiringTrials).toBe(0)
      yield* TestClock.adjust(Duration.days(2))
      expect(yield* maintenance.notifyExpiringTrials).toBe(1)
      expect(yield* maintenance.notifyExpiringTrials).toBe(0)
      expect((yield* eventsOf(orgId, "trial.expiring")).map((e: any) => e.data)).toEqual([
        { credits: "4910", expires_on: "2026-07-31" }
      ])
      // A top-up ends the hourly limit; purchased credits never expire.
      yield* ledger.credit(orgId, 1_000n, "top_up", "first top-up")
      yield* spend(200n)
      yield* TestClock.setTime(Date.parse("2026-07-31T10:00:00.000Z"))
      expect(yield* maintenance.expireTrials).toBe(1)
      expect(yield* maintenance.expireTrials).toBe(0)
      // Trial credits were spent first: 5000 - 250 spent = 4750 expire; the 1000 bought stay.
      expect((yield* ledger.orgCredits(orgId)).balance).toBe(1_000n)
      const grant = yield* ledger.trialGrant(orgId)
      expect(grant?.expiredAt).not.toBeNull()
      yield* checkInvariants(orgId)
    })))

  it.effect("the sweeper releases holds left behind, once their time has passed", () =>
    run(Effect.gen(function*() {
      const ledger = yield* Ledger
      const maintenance = yield* LedgerMaintenance
      yield* TestClock.setTime(Date.parse("2026-08-01T00:00:00.000Z"))
      yield* maintenance.sweepHolds // holds other tests left open at earlier times
      const { agentId, orgId } = yield* setup({ credits: 1_000n })
      const short = yield* ledger.hold({
        orgId,
        agentId,
        amount: 100n,
        purpose: "gateway_call",
        reference: randomUUID(),
        testMode: false,
        ttlMs: 60_000
      })
      const long = yield* holdFor(orgId, agentId, 200n)
      expect(yield* maintenance.sweepHolds).toBe(0)
      yield* TestClock.adjust(Duration.minutes(2))
      expect(yield* maintenance.sweepHolds).toBe(1)
      expect(yield* errorCode(ledger.capture(short.id, 100n))).toBe("already_settled")
      expect((yield* ledger.orgCredits(orgId)).balance).toBe(800n)
      yield* TestClock.adjust(Duration.hours(3))
      expect(yield* maintenance.sweepHolds).toBe(1)
      expect(yield* errorCode(ledger.release(long.id))).toBe("already_settled")
      const inv = yield* checkInvariants(orgId)
      expect(inv.balance).toBe(1_000n)
      expect(inv.openHolds).toBe(0)
    })))
})

/**
 * `settleTogether`: the settlement of holds (one or many) in one statement, with the events
 * it causes, in the caller's transaction when there is one. A probe table stands for the
 * caller's own rows; each rule the settlement applies is checked on its own.
 */
describe("settleTogether (one hold)", () => {
  const probe = (id: string) =>
    Effect.flatMap(
      Effect.flatMap(SqlClient.SqlClient, (sql) =>
        sql<{ writes: number }>`SELECT writes FROM settlement_probe WHERE id = ${id}`),
      (rows) =>
        Effect.succeed(rows[0]?.writes ?? 0)
    )

  /** The settlement and the caller's own write in one transaction, as a batch of gateway calls makes them. */
  const settleWithProbe = (holdId: HoldId, captured: bigint, probeId: string) =>
    Effect.flatMap(SqlClient.SqlClient, (sql) =>
      sql.withTransaction(Effect.gen(function*() {
        const ledger = yield* Ledger
        const [answer] = yield* ledger.settleTogether([{ holdId, captured }])
        const settled = yield* answer!
        yield* sql`UPDATE settlement_probe SET writes = writes + 1 WHERE id = ${probeId}`
        return settled
      })))

  const newProbe = Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    yield* sql`CREATE TABLE IF NOT EXISTS settlement_probe (id uuid PRIMARY KEY, writes int NOT NULL)`
    const id = randomUUID()
    yield* sql`INSERT INTO settlement_probe (id, writes) VALUES (${id}, 0)`
    return id
  })

  it.effect("settles once with the caller's write; not again when it was already settled", () =>
    run(Effect.gen(function*() {
      const { agentId, orgId } = yield* setup({ credits: 10_000n })
      const probeId = yield* newProbe
      const hold = yield* holdFor(orgId, agentId, 100n)
      const settled = yield* settleWithProbe(hold.id, 60n, probeId)
      expect(settled).toEqual({ captured: 60n, released: 40n })
      expect(yield* probe(probeId)).toBe(1)
      expect(yield* errorCode(settleWithProbe(hold.id, 60n, probeId))).toBe("already_settled")
      expect(yield* probe(probeId)).toBe(1)
      expect((yield* Ledger.pipe(Effect.flatMap((l) => l.orgCredits(orgId)))).balance).toBe(9_940n)
      yield* checkInvariants(orgId)
    })))

  it.effect("changes nothing when the caller's transaction fails after it, alert included", () =>
    run(Effect.gen(function*() {
      const sql = yield* SqlClient.SqlClient
      const ledger = yield* Ledger
      const { agentId, orgId } = yield* setup({ credits: 10_000n, budget: 1_000n })
      const hold = yield* holdFor(orgId, agentId, 800n)
      const failed = yield* Effect.exit(sql.withTransaction(
        Effect.zipRight(ledger.settleTogether([{ holdId: hold.id, captured: 800n }]), Effect.fail(new CallerFailed()))
      ))
      expect(Exit.isFailure(failed)).toBe(true)
      expect(yield* ledger.agentMonthSpend(agentId)).toBe(800n)
      expect((yield* ledger.orgCredits(orgId)).balance).toBe(9_200n)
      expect(yield* eventsOf(orgId, "budget.80pct")).toHaveLength(0)
      // Made for good: settled once, and the 80% alert it causes written with it.
      expect(yield* ledger.capture(hold.id, 800n)).toEqual({ captured: 800n, released: 0n })
      expect(yield* eventsOf(orgId, "budget.80pct")).toHaveLength(1)
      expect(yield* errorCode(ledger.capture(hold.id, 800n))).toBe("already_settled")
      yield* checkInvariants(orgId)
    })))

  it.effect("raises budget.80pct for a live agent crossing 80%, never for a test agent", () =>
    run(Effect.gen(function*() {
      const probeId = yield* newProbe
      const live = yield* setup({ credits: 10_000n, budget: 1_000n })
      const hold = yield* holdFor(live.orgId, live.agentId, 800n)
      yield* settleWithProbe(hold.id, 800n, probeId)
      expect(yield* eventsOf(live.orgId, "budget.80pct")).toHaveLength(1)
      const test = yield* setup({ credits: 10_000n, budget: 1_000n, mode: "test" })
      const testHold = yield* holdFor(test.orgId, test.agentId, 900n, true)
      yield* settleWithProbe(testHold.id, 900n, probeId)
      expect(yield* eventsOf(test.orgId, "budget.80pct")).toHaveLength(0)
    })))

  it.effect("gives the trial's hourly window back what it released", () =>
    run(Effect.gen(function*() {
      yield* TestClock.setTime(Date.parse("2026-08-01T10:00:00.000Z"))
      const probeId = yield* newProbe
      const { agentId, orgId } = yield* setup({ trial: true })
      const hold = yield* holdFor(orgId, agentId, 50n)
      expect(yield* errorCode(holdFor(orgId, agentId, 1n))).toBe("trial_limit")
      yield* settleWithProbe(hold.id, 10n, probeId)
      // 10 spent this hour: 40 more fit, 41 do not.
      expect(yield* errorCode(holdFor(orgId, agentId, 41n))).toBe("trial_limit")
      const next = yield* holdFor(orgId, agentId, 40n)
      yield* Ledger.pipe(Effect.flatMap((l) => l.release(next.id)))
      yield* checkInvariants(orgId)
    })))

  it.effect("raises balance.low once when the balance falls under the alert", () =>
    run(Effect.gen(function*() {
      const probeId = yield* newProbe
      const { agentId, orgId } = yield* setup({ credits: 5_100n, budget: 100_000n })
      const first = yield* holdFor(orgId, agentId, 200n)
      yield* settleWithProbe(first.id, 200n, probeId)
      const second = yield* holdFor(orgId, agentId, 10n)
      yield* settleWithProbe(second.id, 10n, probeId)
      expect((yield* eventsOf(orgId, "balance.low")).map((e: any) => e.data.balance_credits)).toEqual(["4900"])
      expect(yield* probe(probeId)).toBe(2)
      yield* checkInvariants(orgId)
    })))
})

describe("settleTogether (a batch in one statement)", () => {
  const settleMany = (holds: ReadonlyArray<{ readonly holdId: HoldId; readonly captured: bigint }>) =>
    Effect.flatMap(Ledger, (ledger) => ledger.settleTogether(holds))
  const codesOf = (answers: ReadonlyArray<{ readonly _tag: "Left" | "Right"; readonly left?: { _tag: string } }>) =>
    answers.map((answer) => answer._tag === "Right" ? "settled" : answer.left!._tag)

  const entriesOf = (orgId: string) =>
    promise(() =>
      db.query(
        `SELECT h.amount AS held, e.kind, e.amount, e.credits FROM ledger_entries e JOIN ledger_holds h ON h.id = e.hold_id
         WHERE e.org_id = $1 AND e.kind IN ('capture', 'release') ORDER BY h.created_at, e.kind`,
        [orgId]
      )
    )

  it.effect("captures and releases several holds at once as one by one would, and each only once", () =>
    run(Effect.gen(function*() {
      const ledger = yield* Ledger
      const { agentId, orgId } = yield* setup({ credits: 10_000n, budget: 100_000n })
      const holds = [yield* holdFor(orgId, agentId, 100n), yield* holdFor(orgId, agentId, 100n)]
      const released = yield* holdFor(orgId, agentId, 100n)
      const settled = yield* settleMany([
        { holdId: holds[0]!.id, captured: 100n },
        { holdId: holds[1]!.id, captured: 60n },
        { holdId: released.id, captured: 0n }
      ])
      expect(settled.map((answer) => answer._tag === "Right" && answer.right)).toEqual([
        { captured: 100n, released: 0n },
        { captured: 60n, released: 40n },
        { captured: 0n, released: 100n }
      ])
      expect((yield* ledger.orgCredits(orgId)).balance).toBe(10_000n - 160n)
      expect(yield* ledger.agentMonthSpend(agentId)).toBe(160n)
      const kinds = (yield* entriesOf(orgId)).map((e: any) => [e.kind, e.amount, e.credits]).sort()
      expect(kinds).toEqual([
        ["capture", "0", "100"],
        ["capture", "0", "60"],
        ["release", "100", "100"],
        ["release", "40", "40"]
      ])
      // Settled already: nothing happens again, and each answer says so.
      expect(
        codesOf(yield* settleMany([{ holdId: holds[0]!.id, captured: 100n }, { holdId: released.id, captured: 0n }]))
      )
        .toEqual(["already_settled", "already_settled"])
      expect((yield* ledger.orgCredits(orgId)).balance).toBe(10_000n - 160n)
      yield* checkInvariants(orgId)
    })))

  it.effect("settles holds of several agents and orgs together; a refused one refuses only itself", () =>
    run(Effect.gen(function*() {
      const ledger = yield* Ledger
      const mine = yield* setup({ credits: 10_000n })
      const other = yield* setup({ credits: 10_000n })
      const hold = yield* holdFor(mine.orgId, mine.agentId, 100n)
      const over = yield* holdFor(mine.orgId, mine.agentId, 100n)
      const theirs = yield* holdFor(other.orgId, other.agentId, 100n)
      const answers = yield* settleMany([
        { holdId: hold.id, captured: 100n },
        { holdId: over.id, captured: 101n },
        { holdId: HoldId.make(randomUUID()), captured: 1n },
        { holdId: theirs.id, captured: 40n },
        { holdId: hold.id, captured: -1n }
      ])
      expect(codesOf(answers)).toEqual(["settled", "capture_exceeds_hold", "not_a_hold", "settled", "invalid_amount"])
      expect((yield* ledger.orgCredits(mine.orgId)).balance).toBe(9_800n)
      expect((yield* ledger.orgCredits(other.orgId)).balance).toBe(9_960n)
      expect(yield* ledger.release(over.id)).toEqual({ captured: 0n, released: 100n })
      yield* checkInvariants(mine.orgId)
      yield* checkInvariants(other.orgId)
    })))

  it.effect("raises budget.80pct and balance.low once for the batch that crosses them", () =>
    run(Effect.gen(function*() {
      const { agentId, orgId } = yield* setup({ credits: 5_300n, budget: 1_000n })
      const holds = [
        yield* holdFor(orgId, agentId, 300n),
        yield* holdFor(orgId, agentId, 300n),
        yield* holdFor(orgId, agentId, 300n)
      ]
      yield* settleMany([
        { holdId: holds[0]!.id, captured: 300n },
        { holdId: holds[1]!.id, captured: 300n },
        { holdId: holds[2]!.id, captured: 250n }
      ])
      // 850 of 1,000 spent; 5,300 - 900 held + 50 released = 4,450, under the 5,000 alert.
      // The same data as a single settlement's events.
      expect((yield* eventsOf(orgId, "budget.80pct")).map((e: any) => e.data)).toEqual([
        { agent_id: agentId, agent_name: "Scout", spent_credits: "850", budget_credits: "1000" }
      ])
      expect((yield* eventsOf(orgId, "balance.low")).map((e: any) => e.data)).toEqual([
        { balance_credits: "4450", balance_usd: "4.450" }
      ])
      const more = yield* holdFor(orgId, agentId, 100n)
      yield* settleMany([{ holdId: more.id, captured: 100n }])
      expect(yield* eventsOf(orgId, "budget.80pct")).toHaveLength(1)
      expect(yield* eventsOf(orgId, "balance.low")).toHaveLength(1)
      yield* checkInvariants(orgId)
    })))

  it.effect("gives the trial's hourly window back what the batch released; test holds move no credits", () =>
    run(Effect.gen(function*() {
      yield* TestClock.setTime(Date.parse("2026-08-01T10:00:00.000Z"))
      const ledger = yield* Ledger
      const { agentId, orgId } = yield* setup({ trial: true })
      const first = yield* holdFor(orgId, agentId, 20n)
      const second = yield* holdFor(orgId, agentId, 20n)
      yield* settleMany([{ holdId: first.id, captured: 10n }, { holdId: second.id, captured: 0n }])
      // 10 spent this hour: 40 more fit, 41 do not.
      expect(yield* errorCode(holdFor(orgId, agentId, 41n))).toBe("trial_limit")
      yield* ledger.release((yield* holdFor(orgId, agentId, 40n)).id)
      yield* checkInvariants(orgId)

      const test = yield* setup({ credits: 1_000n, mode: "test" })
      const testHolds = [
        yield* holdFor(test.orgId, test.agentId, 30n, true),
        yield* holdFor(test.orgId, test.agentId, 30n, true)
      ]
      yield* settleMany([{ holdId: testHolds[0]!.id, captured: 30n }, { holdId: testHolds[1]!.id, captured: 0n }])
      expect(yield* ledger.agentMonthSpend(test.agentId)).toBe(30n)
      expect((yield* ledger.orgCredits(test.orgId)).balance).toBe(1_000n)
      expect(yield* entriesOf(test.orgId)).toHaveLength(0)
    })))
})

describe("holdTogether (batches racing)", () => {
  it.effect("two batches at once for an org's last credits and an agent's last budget: exact, whatever the order", () =>
    run(Effect.gen(function*() {
      const ledger = yield* Ledger
      const sql = yield* SqlClient.SqlClient
      for (let round = 0; round < 20; round++) {
        // 10 holds of 10 fit the balance; 6 fit each agent's budget; each agent asks 12.
        const { agentId: a, orgId } = yield* setup({ credits: 100n, budget: 60n })
        const b = (yield* promise(() => seedAgent(db, orgId, { mode: "live", monthlyBudgetCredits: 60n }))).agentId
        const ask = (agentId: AgentId) => ({
          orgId,
          agentId,
          amount: 10n,
          purpose: "test",
          testMode: false,
          references: [randomUUID()]
        })
        const shuffled = <A>(items: ReadonlyArray<A>) =>
          items.map((item) => ({ item, key: Math.random() })).sort((x, y) => x.key - y.key).map(({ item }) => item)
        const first = shuffled([...Array.from({ length: 8 }, () => ask(a)), ...Array.from({ length: 4 }, () => ask(b))])
        const second = shuffled([
          ...Array.from({ length: 4 }, () => ask(a)),
          ...Array.from({ length: 8 }, () => ask(b))
        ])
        const batches = yield* Effect.all(
          [first, second].map((batch) => sql.withTransaction(ledger.holdTogether(batch))),
          { concurrency: 2 }
        )
        const asked = [...first, ...second]
        const answers = batches.flat()
        const heldBy = (agentId: AgentId) =>
          answers.filter((answer, i) => answer._tag === "Right" && asked[i]!.agentId === agentId).length
        expect(heldBy(a) + heldBy(b)).toBe(10)
        expect(heldBy(a)).toBeLessThanOrEqual(6)
        expect(heldBy(b)).toBeLessThanOrEqual(6)
        for (const answer of answers) {
          if (answer._tag === "Left") expect(["over_budget", "insufficient_credits"]).toContain(answer.left._tag)
        }
        expect((yield* ledger.orgCredits(orgId)).balance).toBe(0n)
        yield* checkInvariants(orgId)
      }
    })))
})
