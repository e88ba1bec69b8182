import { HttpServerRequest } from "@effect/platform"
import { expect, layer } from "@effect/vitest"
import { Chunk, Context, Duration, Effect, Either, Layer, Stream, TestClock, TestContext } from "effect"
import { randomUUID } from "node:crypto"
import type { AuthenticatedAgent } from "../../src/Domain/Current.js"
import type { CallRequest } from "../../src/Domain/GatewayCall.js"
import { ApprovalId } from "../../src/Domain/Ids.js"
import type { ExecuteRequest } from "../../src/Domain/Purchasing.js"
import { ApprovalRequired } from "../../src/Errors/ApiErrors.js"
import { ClientAddress } from "../../src/Http/ClientAddress.js"
import { makeAgentRequestAuthentication } from "../../src/Http/Middleware/Authentication.js"
import { Credentials } from "../../src/Services/Auth/Credentials.js"
import { AgentBalance } from "../../src/Services/Gateway/AgentBalance.js"
import { Gateway } from "../../src/Services/Gateway/Gateway.js"
import { Ledger } from "../../src/Services/Ledger/Ledger.js"
import { Execute } from "../../src/Services/Purchasing/Execute.js"
import { RateLimiter, RateLimitStoreLive } from "../../src/Services/RateLimiter/RateLimiter.js"
import { type ExportDataset, type ExportFormat, Exports } from "../../src/Services/Usage/Exports.js"
import { Refusals } from "../../src/Services/Usage/Refusals.js"
import { Usage, type UsageQuery } from "../../src/Services/Usage/Usage.js"
import { emailFindInput } from "../Purchasing/support.js"
import type { TestDatabase } from "../support/database.js"
import { seedTestCatalogue } from "../support/fakeProvider.js"
import { actorOf, agentOf, seedAgent, type SeededOrg, seedOrg } from "../support/fixtures.js"
import {
  FakeProviderServer,
  GatewayServices,
  inRealTime,
  onRealClock,
  PgTest,
  PurchasingServices,
  SuiteDatabase
} from "../support/testLayers.js"

/**
 * Usage and spend as rules, on the usage services (`src/Services/Usage`) over the suite's
 * database, beside the gateway and purchasing services that make the calls, purchases and
 * refusals they add up, without HTTP: the usage answer over a seeded history and real
 * gateway calls (sums per agent, day, endpoint and tool, the month's budgets, the trial's
 * hourly limit, test activity); the refusals an owner sees there, per agent, UTC day and code
 * (each limit the gateway, purchases and the agent's rate limit give); and the exports'
 * content (calls, receipts, ledger entries and daily usage, as CSV and JSON Lines). Time is
 * the TestClock, set to now at each test's start and moved by the test (a rate-limit window,
 * the gateway switch's one-second cache).
 *
 * The routes' answers (who may read, statuses and codes, the exports' headers) and the
 * refusals counted at the edge (allowlist, disabled agent, old keys, `/mcp`) are the Agents
 * family's wire suite's (`test/Agents/wire/usage.ts`).
 */
const okCall: CallRequest = { endpoint: "fakeprov/ok" }

/**
 * The gateway's services as `gatewayTier` gives them (the fake provider's endpoints in the
 * catalogue, PROVIDERS_UPSTREAM at it), with the usage and purchasing services and the agent
 * endpoints' credential check beside them. The services are built on the real clock, so the
 * timers they fork for themselves (the refusal counts written every second, purchasing's
 * flushes and sweeps) tick in real time while the tests' fibers, which call them, run on the
 * TestClock, given last (as `purchasingTier` gives it): built on the TestClock, the refusals'
 * one-second timer makes setting the clock to now step through every second since 1970.
 */
const usageTier = (label: string) =>
  Layer.unwrapScoped(
    Effect.gen(function*() {
      const fake = yield* FakeProviderServer
      const database = PgTest(label, { PROVIDERS_UPSTREAM: fake.url, GATEWAY_TIMEOUT_MS: "2000" })
      const seeded = Layer.tap(database, (context) =>
        Effect.promise(() => seedTestCatalogue(Context.get(context, SuiteDatabase))))
      const services = Layer.mergeAll(
        Usage.Default,
        Exports.Default,
        Refusals.Default,
        AgentBalance.Default,
        Credentials.Default,
        ClientAddress.Default,
        RateLimiter.Default.pipe(Layer.provide(RateLimitStoreLive)),
        PurchasingServices
      ).pipe(Layer.provideMerge(GatewayServices))
      return Layer.provideMerge(onRealClock(services), seeded)
    })
  ).pipe(Layer.provideMerge(FakeProviderServer.Test), (tier) =>
    Layer.provideMerge(TestContext.TestContext, tier))

/** The service's "now" for a test: the TestClock at the real time. */
const startNow = Effect.flatMap(Effect.sync(() => Date.now()), (now) => Effect.as(TestClock.setTime(now), now))

const dayOf = (ms: number) => new Date(ms).toISOString().slice(0, 10)

const seed = <A>(f: (db: TestDatabase) => Promise<A>) =>
  Effect.flatMap(SuiteDatabase, (db) => Effect.promise(() => f(db)))

/** A seeded agent as its key's check makes it. */
const agentIn = (org: SeededOrg, options: Parameters<typeof seedAgent>[2] = {}) =>
  Effect.gen(function*() {
    const db = yield* SuiteDatabase
    const seeded = yield* Effect.promise(() => seedAgent(db, org.orgId, options))
    return yield* Effect.promise(() => agentOf(db, seeded.agentId))
  })

const topUp = (org: SeededOrg, credits: bigint) =>
  Effect.flatMap(Ledger, (ledger) => ledger.credit(org.orgId, credits, "top_up", "test top-up"))

/** What the gateway answers `agent`: the call, or the refusal. */
const gatewayCall = (agent: AuthenticatedAgent, input: CallRequest = okCall) =>
  Effect.flatMap(Gateway, (gateway) => Effect.either(gateway.call(agent, input)))

/** What a purchase answers `agent` (mock tools run in real time). */
const execute = (agent: AuthenticatedAgent, body: ExecuteRequest) =>
  inRealTime(Effect.flatMap(Execute, (service) => Effect.either(service.execute(agent, body, "http://localhost"))))

const codeOf = <A, E extends { readonly _tag: string }>(answer: Either.Either<A, E>) =>
  Either.isLeft(answer) ? answer.left._tag : "ok"

const usageOf = (org: SeededOrg, query: UsageQuery = {}) =>
  Effect.flatMap(Usage, (usage) => usage.get(actorOf(org), query))

/** An export's whole text, as the route streams it. */
const exported = (org: SeededOrg, dataset: ExportDataset, format: ExportFormat = "csv", query: UsageQuery = {}) =>
  Effect.gen(function*() {
    const { lines } = yield* (yield* Exports).lines(actorOf(org), dataset, format, query)
    return Chunk.join(yield* Stream.runCollect(lines), "")
  })

const jsonLines = (text: string) => text.trim().split("\n").map((line) => JSON.parse(line))

/** A CSV line's cells (quoted cells may hold commas and doubled quotes; no newlines in these rows). */
const cells = (line: string) =>
  Array.from(line.matchAll(/("(?:[^"]|"")*"|[^,]*)(,|$)/g), (m) => m[1]!.replace(/^"|"$/g, "").replace(/""/g, "\""))
    .slice(0, -1)

/** The refusal codes and counts of each agent, as the usage answer lists them. */
const refusalsOf = (org: SeededOrg) =>
  Effect.map(usageOf(org), (usage) => {
    const byAgent: Record<string, Record<string, number>> = {}
    for (const row of usage.refusals) byAgent[row.agent_id] = { ...byAgent[row.agent_id], [row.code]: row.count }
    return byAgent
  })

interface PastHold {
  readonly orgId: string
  readonly agentId: string
  readonly day: string
  readonly captured: bigint
  readonly refunded?: bigint
  readonly testMode?: boolean
  readonly pays: { readonly endpoint: string } | { readonly toolId: string }
}

/** A settled hold on `day` at noon UTC, with the gateway call or receipt item it paid for. */
const seedHold = (db: TestDatabase, hold: PastHold) =>
  Effect.promise(async () => {
    const at = `${hold.day}T12:00:00.000Z`
    const holdId = randomUUID()
    const reference = randomUUID()
    const amount = hold.captured === 0n ? 10n : hold.captured
    if ("endpoint" in hold.pays) {
      await db.query(
        `INSERT INTO gateway_calls (id, org_id, agent_id, endpoint_id, provider_id, mode, status, price_credits,
                                    charged_credits, hold_id, created_at, finished_at)
         VALUES ($1, $2, $3, $4, split_part($4, '/', 1), $5, 'succeeded', $6, $7, $8, $9, $9)`,
        [
          reference,
          hold.orgId,
          hold.agentId,
          hold.pays.endpoint,
          hold.testMode ? "test" : "live",
          amount,
          hold.captured,
          holdId,
          at
        ]
      )
    } else {
      const receiptId = randomUUID()
      await db.query(
        `INSERT INTO receipts (id, org_id, agent_id, mode, tool_id, task_type, price_credits, item_count, held_credits,
                               fallback, status, created_at, completed_at)
         SELECT $1, $2, $3, $4, id, task_type, $5, 1, $5, false, 'done', $6, $6 FROM tools WHERE id = $7`,
        [receiptId, hold.orgId, hold.agentId, hold.testMode ? "test" : "live", amount, at, hold.pays.toolId]
      )
      await db.query(
        `INSERT INTO receipt_items (id, receipt_id, idx, input, status, hold_id, tool_id, cost_credits, refunded_credits)
         VALUES ($1, $2, 0, '{}', 'passed', $3, $4, $5, $6)`,
        [reference, receiptId, holdId, hold.pays.toolId, hold.captured, hold.refunded ?? 0n]
      )
    }
    await db.query(
      `INSERT INTO ledger_holds (id, org_id, agent_id, amount, purpose, reference, test_mode, month, status, captured,
                                 refunded, created_at, expires_at, settled_at)
       VALUES ($1, $2, $3, $4, $5, $6, $7, date_trunc('month', $8::timestamptz)::date, $9, $10, $11, $8, $8, $8)`,
      [
        holdId,
        hold.orgId,
        hold.agentId,
        amount,
        "endpoint" in hold.pays ? "gateway_call" : "purchase_item",
        reference,
        hold.testMode ?? false,
        at,
        hold.captured === 0n ? "released" : "captured",
        hold.captured,
        hold.refunded ?? 0n
      ]
    )
  })

layer(usageTier("usage"))(
  (it) => {
    it.effect("adds up a seeded month per agent, per day, per endpoint and per tool, net of refunds", () =>
      Effect.gen(function*() {
        yield* startNow
        const db = yield* SuiteDatabase
        const org = yield* seed((db) => seedOrg(db))
        const other = yield* seed((db) => seedOrg(db))
        const alpha = yield* seed((db) => seedAgent(db, org.orgId, { mode: "live", name: "alpha" }))
        const beta = yield* seed((db) => seedAgent(db, org.orgId, { mode: "live", name: "beta" }))
        const stranger = yield* seed((db) => seedAgent(db, other.orgId, { mode: "live" }))
        const [tool] = yield* seed((db) => db.query(`SELECT id, slug, name FROM tools ORDER BY slug LIMIT 1`))
        yield* topUp(org, 5_000n)

        const hold = (agentId: string, day: string, captured: bigint, pays: PastHold["pays"], more = {}) =>
          seedHold(db, { orgId: org.orgId, agentId, day, captured, pays, ...more })
        yield* hold(alpha.agentId, "2026-10-05", 100n, { endpoint: "fakeprov/ok" })
        yield* hold(alpha.agentId, "2026-10-05", 40n, { endpoint: "fakeprov/other" })
        yield* hold(beta.agentId, "2026-10-06", 50n, { toolId: tool.id }, { refunded: 20n })
        yield* hold(beta.agentId, "2026-10-31", 7n, { endpoint: "fakeprov/ok" })
        // Not counted: test mode, a released hold, another org, outside the range.
        yield* hold(alpha.agentId, "2026-10-05", 999n, { endpoint: "fakeprov/ok" }, { testMode: true })
        yield* hold(alpha.agentId, "2026-10-07", 0n, { endpoint: "fakeprov/ok" })
        yield* seedHold(db, {
          orgId: other.orgId,
          agentId: stranger.agentId,
          day: "2026-10-05",
          captured: 500n,
          pays: { endpoint: "fakeprov/ok" }
        })
        yield* hold(alpha.agentId, "2026-11-01", 300n, { endpoint: "fakeprov/ok" })
        yield* hold(alpha.agentId, "2026-09-30", 300n, { endpoint: "fakeprov/ok" })

        const usage = yield* usageOf(org, { from: "2026-10-01", to: "2026-10-31" })
        expect(usage.range).toEqual({ from: "2026-10-01", to: "2026-10-31" })
        expect(usage.balance.credits).toBe("5000")
        expect(usage.credits_frozen).toBe(false)
        expect(usage.total_spend.credits).toBe("177")
        expect(usage.by_agent.map((row) => [row.name, row.spend.credits])).toEqual([["alpha", "140"], ["beta", "37"]])
        expect(usage.by_day).toHaveLength(31)
        const spendOn = (day: string) => usage.by_day.find((row) => row.day === day)?.spend.credits
        expect([
          spendOn("2026-10-01"),
          spendOn("2026-10-05"),
          spendOn("2026-10-06"),
          spendOn("2026-10-07"),
          spendOn("2026-10-31")
        ])
          .toEqual(["0", "140", "30", "0", "7"])
        expect(usage.top_endpoints.map((row) => [row.endpoint, row.calls, row.spend.credits])).toEqual([
          ["fakeprov/ok", 2, "107"],
          ["fakeprov/other", 1, "40"]
        ])
        expect(usage.top_tools).toEqual([{
          tool: tool.slug,
          name: tool.name,
          items: 1,
          spend: expect.objectContaining({ credits: "30" })
        }])
        expect(usage.by_day.reduce((sum, row) => sum + BigInt(row.spend.credits), 0n)).toBe(177n)
      }))

    it.effect("defaults to this month so far and shows a gateway call made just now", () =>
      Effect.gen(function*() {
        const now = yield* startNow
        const org = yield* seed((db) => seedOrg(db))
        const agent = yield* agentIn(org, { mode: "live", name: "now" })
        yield* topUp(org, 1_000n)
        const call = yield* Effect.flatMap(Gateway, (gateway) => gateway.call(agent, okCall))
        expect(call.status).toBe("succeeded")
        const usage = yield* usageOf(org)
        const day = dayOf(now)
        expect(usage.range).toEqual({ from: `${day.slice(0, 7)}-01`, to: day })
        expect(usage.by_day.at(-1)).toMatchObject({ day, spend: { credits: call.charged.credits } })
        expect(usage.top_endpoints).toEqual([
          { endpoint: "fakeprov/ok", calls: 1, spend: expect.objectContaining({ credits: call.charged.credits }) }
        ])
        expect(usage.balance.credits).toBe(String(1_000n - BigInt(call.charged.credits)))
      }))

    it.effect("gives every agent's month against its budget, a test agent's priced calls included, as the agent's balance tells it", () =>
      Effect.gen(function*() {
        const now = yield* startNow
        const org = yield* seed((db) => seedOrg(db))
        const tester = yield* agentIn(org, { mode: "test", name: "tester", monthlyBudgetCredits: 5_000n })
        const idle = yield* agentIn(org, { mode: "live", name: "idle" })
        let priced = 0n
        for (let i = 0; i < 3; i++) {
          const answer = yield* Effect.flatMap(Gateway, (gateway) => gateway.call(tester, okCall))
          expect(answer.status).toBe("test")
          priced += BigInt(answer.charged.credits)
        }
        expect(priced).toBeGreaterThan(0n)
        const balance = yield* Effect.flatMap(AgentBalance, (balance) => balance.of(tester))
        expect(balance.month_to_date_spend.credits).toBe(String(priced))
        const usage = yield* usageOf(org)
        // Test spend is no spend of credits...
        expect(usage.by_agent).toEqual([])
        // ...but it counts against the budget.
        const month = dayOf(now).slice(0, 7)
        expect(usage.budgets).toEqual(expect.arrayContaining([
          {
            agent_id: tester.id,
            month,
            spent: expect.objectContaining({ credits: String(priced) }),
            budget: expect.objectContaining({ credits: "5000" }),
            remaining: expect.objectContaining({ credits: String(5_000n - priced) })
          },
          expect.objectContaining({ agent_id: idle.id, spent: expect.objectContaining({ credits: "0" }) })
        ]))
        expect(usage.budgets).toHaveLength(2)
      }))

    it.effect("names a bad range, and takes a range of up to 366 days", () =>
      Effect.gen(function*() {
        yield* startNow
        const org = yield* seed((db) => seedOrg(db))
        for (
          const query of [
            { from: "2026-13-01" },
            { to: "2026-02-30" },
            { from: "yesterday" },
            { from: "2026-10-02", to: "2026-10-01" },
            { from: "2024-01-01", to: "2026-01-01" }
          ]
        ) {
          const answer = yield* Effect.either(usageOf(org, query))
          expect(codeOf(answer), JSON.stringify(query)).toBe("invalid_input")
        }
        const message = (query: UsageQuery) =>
          Effect.map(Effect.flip(usageOf(org, query)), (error) => "message" in error ? error.message : "")
        expect(yield* message({ to: "2026-02-30" })).toContain("`to`")
        expect(yield* message({ from: "2024-01-01", to: "2026-01-01" })).toContain("366 days")
        expect((yield* usageOf(org, { from: "2025-11-24", to: "2026-11-24" })).by_day).toHaveLength(366)
      }))

    it.effect("counts every refused request per agent, day and code, none lost when they come at once", () =>
      Effect.gen(function*() {
        const now = yield* startNow
        const org = yield* seed((db) => seedOrg(db))
        const broke = yield* agentIn(org, { mode: "live", name: "broke" })
        const other = yield* agentIn(org, { mode: "live", name: "other" })
        // No credits at all: every call is refused before a hold.
        const answers = yield* Effect.all(Array.from({ length: 40 }, () => gatewayCall(broke)), {
          concurrency: "unbounded"
        })
        expect(answers.every((a) => codeOf(a) === "insufficient_credits")).toBe(true)
        const purchase = yield* execute(other, { tool: "firecrawl-scrape", inputs: [{ url: "https://example.com" }] })
        expect(codeOf(purchase)).toBe("live_execute_unavailable")

        const usage = yield* usageOf(org)
        expect(usage.refusals).toHaveLength(2)
        const first = answers[0]!
        expect(usage.refusals).toEqual(expect.arrayContaining([
          expect.objectContaining({
            agent_id: broke.id,
            name: "broke",
            day: dayOf(now),
            code: "insufficient_credits",
            count: 40,
            last_message: Either.isLeft(first) ? first.left.message : null
          }),
          expect.objectContaining({ agent_id: other.id, code: "live_execute_unavailable", count: 1 })
        ]))
        expect(usage.live_purchases_open).toBe(false)
      }))

    it.effect("counts an agent's requests refused by its rate limit", () =>
      Effect.gen(function*() {
        yield* startNow
        const db = yield* SuiteDatabase
        const org = yield* seed((db) => seedOrg(db))
        const agent = yield* Effect.promise(() => seedAgent(db, org.orgId, { mode: "test", name: "hasty" }))
        const authenticate = (yield* makeAgentRequestAuthentication)("an agent key")
        // What the agent endpoints' middleware runs for one request with the agent's key.
        const agentRequest = authenticate.pipe(
          Effect.provideService(
            HttpServerRequest.HttpServerRequest,
            HttpServerRequest.fromWeb(
              new Request("http://localhost/v1/agent", { headers: { authorization: `Bearer ${agent.key}` } })
            )
          ),
          Effect.either
        )
        // 600 requests a minute per key, in windows from one whole minute to the next: the
        // 601st and later of a minute are refused.
        yield* TestClock.setTime(Math.ceil((yield* TestClock.currentTimeMillis) / 60_000) * 60_000)
        const answers = yield* Effect.all(Array.from({ length: 620 }, () => agentRequest), { concurrency: 20 })
        const refused = answers.filter((answer) => codeOf(answer) === "rate_limited").length
        expect(refused).toBe(20)
        expect(answers.filter((answer) => codeOf(answer) === "ok")).toHaveLength(600)
        // The next minute is a new window.
        yield* TestClock.adjust(Duration.minutes(1))
        expect(codeOf(yield* agentRequest)).toBe("ok")
        const usage = yield* usageOf(org)
        expect(usage.refusals).toEqual([
          expect.objectContaining({ name: "hasty", code: "rate_limited", count: refused })
        ])
      }))

    it.effect("leaves out errors that are not limits, and other orgs' refusals", () =>
      Effect.gen(function*() {
        yield* startNow
        const org = yield* seed((db) => seedOrg(db))
        const agent = yield* agentIn(org, { mode: "live" })
        expect(codeOf(yield* gatewayCall(agent, { endpoint: "fakeprov/no-such-endpoint" }))).toBe("unknown_endpoint")
        const stranger = yield* seed((db) => seedOrg(db))
        const theirs = yield* agentIn(stranger, { mode: "live" })
        expect(codeOf(yield* gatewayCall(theirs))).toBe("insufficient_credits")
        expect((yield* usageOf(org)).refusals).toEqual([])
        expect((yield* usageOf(stranger)).refusals).toEqual([
          expect.objectContaining({ agent_id: theirs.id, code: "insufficient_credits", count: 1 })
        ])
      }))

    it.effect("shows the trial's hourly limit until the first top-up, then none", () =>
      Effect.gen(function*() {
        yield* startNow
        const org = yield* seed((db) => seedOrg(db))
        const agent = yield* agentIn(org, { mode: "live", name: "trial" })
        yield* Effect.flatMap(Ledger, (ledger) => ledger.grantTrial(org.orgId))
        // Calls until the hour's 50 trial credits are spent and the next is refused.
        let refused: string | null = null
        for (let i = 0; i < 60 && refused === null; i++) {
          const answer = yield* gatewayCall(agent)
          if (Either.isLeft(answer)) refused = answer.left._tag
        }
        expect(refused).toBe("trial_limit")
        const before = yield* usageOf(org)
        expect(before.funded).toBe(false)
        expect(before.trial_limit?.per_hour.credits).toBe("50")
        expect(Number(before.trial_limit?.spent_this_hour.credits)).toBeGreaterThan(0)
        expect(Number(before.trial_limit?.spent_this_hour.credits)).toBeLessThanOrEqual(50)
        expect(Date.parse(before.trial_limit!.resets_at) % 3_600_000).toBe(0)
        expect(before.refusals).toEqual([expect.objectContaining({ code: "trial_limit", count: 1 })])

        yield* topUp(org, 10_000n)
        const after = yield* usageOf(org)
        expect(after.funded).toBe(true)
        expect(after.trial_limit).toBeNull()
      }))

    it.effect("keeps test activity apart from spend", () =>
      Effect.gen(function*() {
        yield* startNow
        const org = yield* seed((db) => seedOrg(db))
        const tester = yield* agentIn(org, { mode: "test" })
        const call = yield* Effect.flatMap(Gateway, (gateway) => gateway.call(tester, okCall))
        expect(call.status).toBe("test")
        const usage = yield* usageOf(org)
        expect(usage.total_spend.credits).toBe("0")
        expect(usage.test_activity).toEqual({
          purchases: 0,
          items: 0,
          calls: 1,
          priced: expect.objectContaining({ credits: call.charged.credits })
        })
      }))

    it.effect("exports a large range of ledger entries as CSV and as JSON Lines, every row once", () =>
      Effect.gen(function*() {
        yield* startNow
        const org = yield* seed((db) => seedOrg(db))
        const rows = 60_000
        yield* seed((db) =>
          db.query(
            `INSERT INTO ledger_entries (id, org_id, kind, amount, credits, note, created_at)
             SELECT gen_random_uuid(), $1, 'adjustment', g, g, 'seeded, "quoted"', timestamptz '2026-01-01' + (g % 300) * interval '1 day'
             FROM generate_series(1, $2) AS g`,
            [org.orgId, rows]
          )
        )
        const lines = (yield* exported(org, "ledger", "csv", { from: "2026-01-01", to: "2026-12-31" })).split("\r\n")
        expect(lines.at(-1)).toBe("")
        expect(lines[0]).toBe("id,seq,created_at,kind,balance_change_credits,credits,agent_id,hold_id,note")
        expect(lines.length - 2).toBe(rows)
        const first = cells(lines[1]!)
        expect(first[3]).toBe("adjustment")
        expect(first[8]).toBe("seeded, \"quoted\"")
        const amounts = new Set(lines.slice(1, -1).map((line) => cells(line)[4]))
        expect(amounts.size).toBe(rows)

        const objects = jsonLines(yield* exported(org, "ledger", "jsonl", { from: "2026-03-01", to: "2026-03-31" }))
        expect(objects.length).toBe(31 * 200)
        expect(objects.every((o) => o.created_at >= "2026-03-01" && o.created_at < "2026-04-01")).toBe(true)
        expect(Object.keys(objects[0])).toEqual(
          ["id", "seq", "created_at", "kind", "balance_change_credits", "credits", "agent_id", "hold_id", "note"]
        )
      }))

    it.effect("exports receipts with their items' inputs, calls, and usage with refusals", () =>
      Effect.gen(function*() {
        const now = yield* startNow
        const org = yield* seed((db) => seedOrg(db))
        const agent = yield* agentIn(org, { mode: "test", name: "=cmd" })
        const bought = yield* execute(agent, {
          tool: "hunter-email-finder",
          inputs: [emailFindInput(1), emailFindInput(2)]
        })
        if (Either.isLeft(bought) || !("receipt_id" in bought.right)) {
          return yield* Effect.die(`expected a receipt, got ${JSON.stringify(bought)}`)
        }
        const called = yield* Effect.flatMap(Gateway, (gateway) => gateway.call(agent, okCall))
        expect(called.status).toBe("test")
        const broke = yield* agentIn(org, { mode: "live", name: "broke" })
        expect(codeOf(yield* gatewayCall(broke))).toBe("insufficient_credits")

        const receipts = jsonLines(yield* exported(org, "receipts", "jsonl"))
        expect(receipts.map((r) => r.item_index)).toEqual([0, 1])
        expect(receipts[0]).toMatchObject({
          receipt_id: bought.right.receipt_id,
          agent_name: "=cmd",
          mode: "test",
          tool: "hunter-email-finder",
          input: emailFindInput(1)
        })

        // A name a spreadsheet would run as a formula is written as text.
        const csv = (yield* exported(org, "calls")).split("\r\n")
        // The header and the test call (a refused call leaves no row).
        expect(csv).toHaveLength(3)
        const [header, ...calls] = csv.slice(0, -1).map(cells)
        const named = (row: Array<string>) => Object.fromEntries(header!.map((h, i) => [h, row[i]]))
        expect(calls.map(named)).toEqual(expect.arrayContaining([
          expect.objectContaining({ agent_name: "'=cmd", endpoint: "fakeprov/ok", mode: "test", status: "test" })
        ]))
        // A test row moved no credit: its charge is 0, so a column's sum is what was spent; its price stays.
        const testCall = calls.map(named).find((row) => row["mode"] === "test")!
        expect(testCall["charged_credits"]).toBe("0")
        expect(testCall["price_credits"]).toBe(called.charged.credits)
        expect(Number(testCall["price_credits"])).toBeGreaterThan(0)
        expect(receipts.map((r) => r.cost_credits)).toEqual(["0", "0"])

        const usage = jsonLines(yield* exported(org, "usage", "jsonl"))
        const day = dayOf(now)
        expect(usage).toEqual(expect.arrayContaining([
          expect.objectContaining({ day, agent_name: "=cmd", spend_credits: "0", items: 2, calls: 1, refusals: 0 }),
          expect.objectContaining({ day, agent_name: "broke", spend_credits: "0", refusals: 1 })
        ]))
      }))

    it.effect("refuses an export's bad range before any line is made", () =>
      Effect.gen(function*() {
        yield* startNow
        const org = yield* seed((db) => seedOrg(db))
        const exports = yield* Exports
        for (const dataset of ["calls", "receipts", "ledger", "usage"] as const) {
          for (const query of [{ from: "2026-02-30" }, { from: "2026-10-02", to: "2026-10-01" }]) {
            const answer = yield* Effect.either(exports.lines(actorOf(org), dataset, "csv", query))
            expect(codeOf(answer), `${dataset} ${JSON.stringify(query)}`).toBe("invalid_input")
          }
        }
      }))

    // Last: it switches the gateway off for a while.
    it.effect("counts the budget, the balance, frozen credits, the gateway off and an expired approval, in usage and its export", () =>
      Effect.gen(function*() {
        yield* startNow
        const db = yield* SuiteDatabase
        const ledger = yield* Ledger
        const org = yield* seed((db) => seedOrg(db))
        const thrifty = yield* agentIn(org, { name: "thrifty", monthlyBudgetCredits: 1n })
        const broke = yield* agentIn(org, { name: "broke", mode: "live" })
        const asker = yield* agentIn(org, { name: "asker", approvalThresholdCredits: 100n })

        expect(codeOf(yield* gatewayCall(thrifty))).toBe("over_budget")
        expect(codeOf(yield* gatewayCall(broke))).toBe("insufficient_credits")
        const purchase = {
          tool: "hunter-email-finder",
          inputs: [emailFindInput(1), emailFindInput(2), emailFindInput(3)]
        }
        const asked = yield* execute(asker, purchase)
        if (Either.isLeft(asked) || !(asked.right instanceof ApprovalRequired)) {
          return yield* Effect.die(`expected approval_required, got ${JSON.stringify(asked)}`)
        }
        const approvalId = ApprovalId.make(asked.right.approval.id)
        yield* Effect.promise(() =>
          db.query(`UPDATE purchase_approvals SET expires_at = expires_at - interval '25 hours' WHERE id = $1`, [
            approvalId
          ])
        )
        expect(codeOf(yield* execute(asker, { ...purchase, approval_id: approvalId }))).toBe("approval_expired")

        // Frozen credits, then the gateway switched off.
        yield* topUp(org, 10_000n)
        yield* ledger.setFrozen(org.orgId, true)
        expect(codeOf(yield* gatewayCall(broke))).toBe("credits_frozen")
        yield* Effect.promise(() =>
          db.query(
            `INSERT INTO runtime_settings (name, value, updated_at) VALUES ('gateway_enabled', 'false'::jsonb, now())
             ON CONFLICT (name) DO UPDATE SET value = excluded.value`
          )
        )
        // Until the switch reaches the gateway (its cache keeps it a second), calls are refused as frozen.
        expect(codeOf(yield* gatewayCall(broke))).toBe("credits_frozen")
        yield* TestClock.adjust(Duration.seconds(2))
        expect(codeOf(yield* gatewayCall(broke))).toBe("endpoint_unavailable")
        yield* Effect.promise(() => db.query(`DELETE FROM runtime_settings WHERE name = 'gateway_enabled'`))
        yield* TestClock.adjust(Duration.seconds(2))
        expect(codeOf(yield* gatewayCall(broke))).toBe("credits_frozen")

        expect(yield* refusalsOf(org)).toEqual({
          [thrifty.id]: { over_budget: 1 },
          [broke.id]: { insufficient_credits: 1, credits_frozen: 3, endpoint_unavailable: 1 },
          [asker.id]: { approval_expired: 1 }
        })

        // The usage export counts the same refusals per agent and day.
        const rows = jsonLines(yield* exported(org, "usage", "jsonl"))
        const exportedRefusals = (agentId: string) =>
          rows.filter((row) => row.agent_id === agentId).reduce((sum, row) => sum + Number(row.refusals), 0)
        expect(exportedRefusals(thrifty.id)).toBe(1)
        expect(exportedRefusals(broke.id)).toBe(5)
        expect(exportedRefusals(asker.id)).toBe(1)
      }))
  }
)
