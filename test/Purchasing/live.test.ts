import { expect, layer } from "@effect/vitest"
import { Effect, Either, Schema } from "effect"
import { randomUUID } from "node:crypto"
import type { AuthenticatedAgent } from "../../src/Domain/Current.js"
import type { AdminId, DisputeId, JobId, OrgId, ReceiptId } from "../../src/Domain/Ids.js"
import { ExecuteRequest, ExecuteResult, Receipt } from "../../src/Domain/Purchasing.js"
import { errorCatalogue } from "../../src/Errors/ErrorCatalogue.js"
import { Ledger } from "../../src/Services/Ledger/Ledger.js"
import { Disputes } from "../../src/Services/Purchasing/Disputes.js"
import { Execute } from "../../src/Services/Purchasing/Execute.js"
import { JobRunner } from "../../src/Services/Purchasing/Jobs.js"
import { Receipts } from "../../src/Services/Purchasing/Receipts.js"
import { agentOf, seedAdmin, seedAgent, seedOrg } from "../support/fixtures.js"
import { FakeToolProviderServer, inRealTime, livePurchasingTier, SuiteDatabase } from "../support/testLayers.js"
import { emailFindInput } from "./support.js"

/**
 * Live purchases switched on against the fake tool provider on loopback: the same forwarder
 * as the gateway, the provider's credential, real holds on the org's credits. On the
 * purchasing services, without HTTP (execute's wire is in execute.test.ts).
 */
const rows = (text: string, values: ReadonlyArray<unknown> = []) =>
  Effect.flatMap(SuiteDatabase, (db) => Effect.promise(() => db.query(text, values)))

/** The org's balance, and the money invariants of its ledger. */
const money = (orgId: string) =>
  Effect.gen(function*() {
    const [balance] = yield* rows(`SELECT balance FROM org_balances WHERE org_id = $1`, [orgId])
    const [sum] = yield* rows(`SELECT COALESCE(SUM(amount), 0)::text AS sum FROM ledger_entries WHERE org_id = $1`, [
      orgId
    ])
    const [open] = yield* rows(`SELECT count(*)::int AS n FROM ledger_holds WHERE org_id = $1 AND status = 'held'`, [
      orgId
    ])
    expect(sum.sum).toBe(balance.balance)
    return { balance: BigInt(balance.balance), openHolds: open.n as number }
  })

const liveAgent = (orgId: OrgId) =>
  Effect.gen(function*() {
    const db = yield* SuiteDatabase
    return yield* Effect.promise(async () =>
      agentOf(
        db,
        (await seedAgent(db, orgId, { mode: "live", approvalThresholdCredits: null, monthlyBudgetCredits: 1_000_000n }))
          .agentId
      )
    )
  })

/** A funded org (its credits topped up) with a live agent. */
const liveBuyer = (credits: bigint) =>
  Effect.gen(function*() {
    const db = yield* SuiteDatabase
    const org = yield* Effect.promise(() => seedOrg(db))
    yield* (yield* Ledger).credit(org.orgId, credits, "top_up", "test top-up")
    return { org, agent: yield* liveAgent(org.orgId) }
  })

/** POST /v1/execute's body through the service: the answer, or the typed error. */
const execute = (agent: AuthenticatedAgent, body: unknown) =>
  Effect.flatMap(
    Schema.decodeUnknown(ExecuteRequest)(body).pipe(Effect.orDie),
    (request) =>
      Effect.either(Effect.flatMap(Execute, (execute) => execute.execute(agent, request, "http://localhost")))
  )

/** The answer of a purchase that went ahead (a result, check_failed, a job or an approval asked). */
const answered = (answer: Either.Either<unknown, { readonly _tag: string }>): any => {
  if (Either.isLeft(answer)) throw new Error(`expected an answer, got ${answer.left._tag}`)
  return answer.right
}

/** A purchase's result as it goes on the wire (items' outcome and cost as the buyer reads them). */
const onWire = (answer: unknown): any => Schema.encodeSync(ExecuteResult)(answer as ExecuteResult)

/** A refusal's code and message, with the catalogue's retryable flag it goes out with. */
const refusal = (answer: Either.Either<unknown, { readonly _tag: string }>) => {
  if (Either.isRight(answer)) throw new Error(`expected a refusal, got ${JSON.stringify(answer.right)}`)
  const code = answer.left._tag as keyof typeof errorCatalogue
  return {
    code,
    retryable: errorCatalogue[code].retryable,
    message: (answer.left as unknown as { readonly message: string }).message
  }
}

layer(
  livePurchasingTier("plive", {
    // Long enough for a loaded machine to answer every call that should succeed; only the
    // hanging provider waits it out (twice: one retry).
    GATEWAY_TIMEOUT_MS: "5000",
    PROVIDER_HUNTER_API_KEY: "hunter-secret",
    PROVIDER_FIRECRAWL_API_KEY: "fc-secret"
  })
)("live purchases (LIVE_EXECUTE_ENABLED=true)", (it) => {
  it.effect(
    "calls the provider through the forwarder with its credential and charges passed items from the org's credits",
    () =>
      inRealTime(Effect.gen(function*() {
        const fake = yield* FakeToolProviderServer
        const { agent, org } = yield* liveBuyer(10_000n)
        const before = fake.seen.length
        const answer = onWire(answered(
          yield* execute(agent, {
            tool: "hunter-email-finder",
            inputs: [emailFindInput(1), emailFindInput(2, "mock-partial"), emailFindInput(3, "mock-fail")]
          })
        ))
        expect(answer.mode).toBe("live")
        expect(answer.items.map((i: any) => [i.outcome, i.cost.credits])).toEqual([
          ["passed", "40"],
          ["partial", "40"],
          ["failed", "0"]
        ])
        expect(answer.items[0].result.email).toBe("jane1.doe@acme1.example.com")
        const calls = fake.seen.slice(before)
        expect(calls).toHaveLength(3)
        for (const seen of calls) {
          const url = new URL(seen.url, "http://fake")
          expect(seen.method).toBe("GET")
          expect(url.pathname).toBe("/hunter/v2/email-finder")
          expect(url.searchParams.get("api_key")).toBe("hunter-secret")
          expect(url.searchParams.get("last_name")).toBe("Doe")
        }
        expect(yield* money(org.orgId)).toEqual({ balance: 10_000n - 80n, openHolds: 0 })
        const receipt = yield* (yield* Receipts).get(org.orgId, answer.receipt_id as ReceiptId)
        expect(Schema.encodeSync(Receipt)(receipt)).toMatchObject({ mode: "live", charged: { credits: "80" } })
      }))
  )

  it.effect("counts live purchase calls against the provider's daily cap: a call over it is not made", () =>
    inRealTime(Effect.gen(function*() {
      const fake = yield* FakeToolProviderServer
      const { agent, org } = yield* liveBuyer(10_000n)
      const [endpoint] = yield* rows(
        `SELECT e.provider_id, p.daily_call_cap FROM tools t JOIN catalogue_endpoints e ON e.id = t.gateway_endpoint
         JOIN providers p ON p.id = e.provider_id WHERE t.slug = 'hunter-email-finder'`
      )
      yield* rows(`UPDATE providers SET daily_call_cap = 2 WHERE id = $1`, [endpoint.provider_id])
      yield* Effect.gen(function*() {
        const before = fake.seen.length
        const answer = onWire(answered(
          yield* execute(agent, {
            tool: "hunter-email-finder",
            inputs: [emailFindInput(11), emailFindInput(12), emailFindInput(13)]
          })
        ))
        expect(answer.items.map((i: any) => i.outcome).sort()).toEqual(["failed", "passed", "passed"])
        // Two calls made; the third, over the cap, never left (its retry neither).
        expect(fake.seen.length - before).toBe(2)
        const [counted] = yield* rows(
          `SELECT calls FROM provider_daily_calls WHERE org_id = $1 AND provider_id = $2`,
          [org.orgId, endpoint.provider_id]
        )
        expect(counted.calls).toBe(2)
        expect(yield* money(org.orgId)).toEqual({ balance: 10_000n - 80n, openHolds: 0 })
      }).pipe(
        Effect.ensuring(
          rows(`UPDATE providers SET daily_call_cap = $2 WHERE id = $1`, [
            endpoint.provider_id,
            endpoint.daily_call_cap
          ])
        )
      )
    })))

  it.effect("sends the input as the JSON body to POST endpoints", () =>
    inRealTime(Effect.gen(function*() {
      const fake = yield* FakeToolProviderServer
      const { agent, org } = yield* liveBuyer(1_000n)
      const before = fake.seen.length
      answered(yield* execute(agent, { tool: "firecrawl-scrape", inputs: [{ url: "https://news.example.com/a" }] }))
      const [seen] = fake.seen.slice(before)
      expect(seen!.method).toBe("POST")
      expect(JSON.parse(seen!.body)).toEqual({ url: "https://news.example.com/a" })
      expect(yield* money(org.orgId)).toEqual({ balance: 995n, openHolds: 0 })
    })))

  it.effect("releases the hold when the provider fails after one retry, times out or finds nothing", () =>
    inRealTime(Effect.gen(function*() {
      const fake = yield* FakeToolProviderServer
      const { agent, org } = yield* liveBuyer(1_000n)
      const before = fake.seen.length
      const down = refusal(
        yield* execute(agent, { tool: "hunter-email-finder", inputs: [emailFindInput(1, "live-down")] })
      )
      expect(down.code).toBe("provider_error")
      expect(fake.seen.length - before).toBe(2)
      const hang = refusal(
        yield* execute(agent, { tool: "hunter-email-finder", inputs: [emailFindInput(2, "live-hang")] })
      )
      expect(hang.code).toBe("provider_error")
      expect(hang.message).toMatch(/did not answer within/)
      const refused = answered(
        yield* execute(agent, { tool: "hunter-email-finder", inputs: [emailFindInput(3, "live-refuse")] })
      )
      expect(refused._tag).toBe("check_failed")
      expect(refused.reason).toBe("hunter found no result (HTTP 404)")
      const flaky = onWire(answered(
        yield* execute(agent, { tool: "hunter-email-finder", inputs: [emailFindInput(4, "live-flaky")] })
      ))
      expect(flaky.items[0].outcome).toBe("passed")
      expect(yield* money(org.orgId)).toEqual({ balance: 960n, openHolds: 0 })
    })))

  it.effect("answers insufficient_credits and credits_frozen before anything runs", () =>
    inRealTime(Effect.gen(function*() {
      const fake = yield* FakeToolProviderServer
      const { agent, org } = yield* liveBuyer(50n)
      const before = fake.seen.length
      const poor = refusal(
        yield* execute(agent, { tool: "hunter-email-finder", inputs: [emailFindInput(1), emailFindInput(2)] })
      )
      expect(poor.code).toBe("insufficient_credits")
      yield* (yield* Ledger).setFrozen(org.orgId, true)
      const frozen = refusal(yield* execute(agent, { tool: "hunter-email-finder", inputs: [emailFindInput(1)] }))
      expect(frozen.code).toBe("credits_frozen")
      // The approval rule comes first: past the month's budget (40 credits on 20 spent of 50), a
      // frozen org's agent asks its owners.
      yield* rows(`UPDATE agents SET monthly_budget_credits = 50 WHERE id = $1`, [agent.id])
      yield* rows(
        `INSERT INTO agent_month_spend (agent_id, month, org_id, spent, held)
         VALUES ($1, date_trunc('month', now())::date, $2, 0, 0) ON CONFLICT DO NOTHING`,
        [agent.id, org.orgId]
      )
      yield* rows(`UPDATE agent_month_spend SET spent = 20 WHERE agent_id = $1`, [agent.id])
      const db = yield* SuiteDatabase
      const now = yield* Effect.promise(() => agentOf(db, agent.id))
      const pastBudget = answered(yield* execute(now, { tool: "hunter-email-finder", inputs: [emailFindInput(1)] }))
      expect(pastBudget._tag).toBe("approval_required")
      expect(pastBudget.approval.reason).toBe("over_budget")
      expect(fake.seen.length).toBe(before)
      expect(yield* rows(`SELECT 1 FROM receipts WHERE org_id = $1`, [org.orgId])).toHaveLength(0)
      expect(yield* money(org.orgId)).toEqual({ balance: 50n, openHolds: 0 })
    })))

  it.effect("answers trial_limit (retryable) to an unfunded org past 50 trial credits an hour", () =>
    inRealTime(Effect.gen(function*() {
      const db = yield* SuiteDatabase
      const org = yield* Effect.promise(() => seedOrg(db))
      yield* (yield* Ledger).grantTrial(org.orgId)
      const agent = yield* Effect.promise(async () =>
        agentOf(db, (await seedAgent(db, org.orgId, { mode: "live", approvalThresholdCredits: null })).agentId)
      )
      answered(yield* execute(agent, { tool: "hunter-email-finder", inputs: [emailFindInput(1)] }))
      const second = refusal(yield* execute(agent, { tool: "hunter-email-finder", inputs: [emailFindInput(2)] }))
      expect(second).toMatchObject({ code: "trial_limit", retryable: true })
      expect(yield* money(org.orgId)).toEqual({ balance: 5_000n - 40n, openHolds: 0 })
    })))

  it.effect("refunds the org's credits when a dispute on a live item is upheld", () =>
    inRealTime(Effect.gen(function*() {
      const db = yield* SuiteDatabase
      const disputes = yield* Disputes
      const { agent, org } = yield* liveBuyer(1_000n)
      const answer = answered(
        yield* execute(agent, { tool: "hunter-email-finder", inputs: [emailFindInput(1), emailFindInput(2)] })
      )
      expect(yield* money(org.orgId)).toEqual({ balance: 920n, openHolds: 0 })
      const opened = yield* disputes.open(agent, { receipt_id: answer.receipt_id, item_index: 1, reason: "bounced" })
      const admin = yield* Effect.promise(() => seedAdmin(db))
      const upheld = yield* disputes.decide(
        {
          admin_id: admin.adminId as AdminId,
          email: `admin-${admin.adminId.slice(0, 8)}@example.com`,
          session_id: randomUUID()
        },
        opened.id as DisputeId,
        "upheld",
        "Bounced on delivery"
      )
      // The refund as the record holds it (`refund: {credits: "40"}` on the wire).
      expect(upheld.refunded_credits).toBe(40n)
      expect(yield* money(org.orgId)).toEqual({ balance: 960n, openHolds: 0 })
      const entries = yield* rows(`SELECT kind, amount FROM ledger_entries WHERE org_id = $1 AND kind = 'refund'`, [
        org.orgId
      ])
      expect(entries).toEqual([{ kind: "refund", amount: "40" }])
    })))

  it.effect("runs live jobs with a hold per item", () =>
    inRealTime(Effect.gen(function*() {
      const { agent, org } = yield* liveBuyer(10_000n)
      const accepted = answered(
        yield* execute(agent, {
          tool: "firecrawl-scrape",
          inputs: Array.from(
            { length: 40 },
            (_, i) => ({ url: i === 5 ? "https://mock-fail.example.com/x" : `https://a.example.com/${i}` })
          )
        })
      )
      expect(accepted.status).toBe("queued")
      // Every item is held at once.
      expect((yield* money(org.orgId)).balance).toBe(10_000n - 200n)
      // A job worker's rounds, run here until no job is left.
      const runner = yield* JobRunner
      while (yield* runner.runNext("worker:test:live")) {
        // the next batch
      }
      const job = yield* runner.get(org.orgId, accepted.job_id as JobId)
      expect(job.status).toBe("done")
      expect(job.counts).toMatchObject({ passed: 39, failed: 1 })
      expect(yield* money(org.orgId)).toEqual({ balance: 10_000n - 195n, openHolds: 0 })
    })))
})
