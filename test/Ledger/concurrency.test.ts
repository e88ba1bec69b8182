import { expect, layer } from "@effect/vitest"
import { Effect, Either } from "effect"
import type { CallRequest } from "../../src/Domain/GatewayCall.js"
import { Gateway } from "../../src/Services/Gateway/Gateway.js"
import { Ledger } from "../../src/Services/Ledger/Ledger.js"
import { agentOf, seedAgent, seedOrg } from "../support/fixtures.js"
import { invariants } from "../support/ledgerChecks.js"
import { gatewayTier, SuiteDatabase } from "../support/testLayers.js"

/**
 * 500 concurrent gateway calls on real PostgreSQL against an org whose credits fit exactly
 * N = 100 calls, from two agents whose budgets fit M = 60 calls each (M < N < 2M, so both
 * the balance and each budget bind), with succeeding, failing, refusing and hanging
 * providers and repeated identical requests. On the gateway's service (its pool as large
 * as the server's), without HTTP.
 */
const PRICE = 10n
const N = 100n
const M = 60n

layer(gatewayTier("concurrency", { DATABASE_POOL_SIZE: "20" }))((it) => {
  it.effect("concurrent gateway calls never overspend the balance or a budget, and charge nothing for failures", () =>
    Effect.gen(function*() {
      const db = yield* SuiteDatabase
      const gateway = yield* Gateway
      const org = yield* Effect.promise(() => seedOrg(db))
      yield* (yield* Ledger).credit(org.orgId, N * PRICE, "top_up", "test top-up")
      const agents = yield* Effect.promise(async () => {
        const seeded = [
          await seedAgent(db, org.orgId, { mode: "live", monthlyBudgetCredits: M * PRICE }),
          await seedAgent(db, org.orgId, { mode: "live", monthlyBudgetCredits: M * PRICE })
        ]
        return Promise.all(seeded.map((agent) => agentOf(db, agent.agentId)))
      })
      const mix = ["fakeprov/ok", "fakeprov/ok", "fakeprov/slow", "fakeprov/fail", "fakeprov/refuse", "fakeprov/hang"]
      const bodies: Array<CallRequest> = Array.from({ length: 250 }, (_, i) => ({
        endpoint: mix[i % mix.length]!,
        query: { n: i }
      }))
      // Each endpoint read once first (by another org's test agent, which moves no credits), so
      // that no kind of call reaches its hold before the others for its endpoint's first read.
      const tester = yield* Effect.promise(async () =>
        agentOf(db, (await seedAgent(db, (await seedOrg(db)).orgId, { mode: "test" })).agentId)
      )
      yield* Effect.forEach(new Set(mix), (endpoint) => gateway.call(tester, { endpoint }), { discard: true })
      // Every request is made twice at once (the repeats), from both agents: 500 calls.
      const sends = bodies.flatMap((body, i) => {
        const agent = agents[i % 2]!
        const send = Effect.either(gateway.call(agent, body))
        return [{ agent, endpoint: body.endpoint, send }, { agent, endpoint: body.endpoint, send }]
      })
      const answers = yield* Effect.forEach(
        sends,
        (s) => Effect.map(s.send, (answer) => ({ ...s, answer })),
        { concurrency: "unbounded" }
      )

      const byStatus = new Map<string, number>()
      for (const { answer } of answers) {
        const key = Either.isRight(answer) ? answer.right.status : answer.left._tag
        byStatus.set(key, (byStatus.get(key) ?? 0) + 1)
      }
      // Only the expected answers, and some of each kind of refusal and failure happened.
      expect(
        [...byStatus.keys()].every((k) =>
          ["succeeded", "failed", "refused", "timed_out", "insufficient_credits", "over_budget"].includes(k)
        )
      ).toBe(true)
      expect(byStatus.get("failed")).toBeGreaterThan(0)
      expect(byStatus.get("timed_out")).toBeGreaterThan(0)
      expect((byStatus.get("insufficient_credits") ?? 0) + (byStatus.get("over_budget") ?? 0)).toBeGreaterThan(0)

      const succeeded = answers.filter((a) => Either.isRight(a.answer) && a.answer.right.status === "succeeded")
      expect(BigInt(succeeded.length)).toBeLessThanOrEqual(N)
      for (const agent of agents) {
        expect(BigInt(succeeded.filter((a) => a.agent === agent).length)).toBeLessThanOrEqual(M)
      }
      // Every success charged the price; every failure, refusal and timeout nothing, with a refund.
      for (const { answer } of answers) {
        if (Either.isLeft(answer)) continue
        if (answer.right.status === "succeeded") {
          expect(answer.right.charged.credits).toBe(PRICE.toString())
          expect(["fakeprov/ok", "fakeprov/slow"]).toContain(answer.right.endpoint)
        } else {
          expect(answer.right.charged.credits).toBe("0")
          expect(answer.right.refunded?.credits).toBe(PRICE.toString())
        }
      }

      const inv = yield* Effect.promise(() => invariants(db, org.orgId))
      expect(inv.entriesSum).toBe(inv.balance)
      expect(inv.balance).toBe(N * PRICE - BigInt(succeeded.length) * PRICE)
      expect(inv.balance >= 0n).toBe(true)
      expect(inv.openHolds).toBe(0)
      expect(inv.negativeBudgets).toBe(0)
      expect(inv.mismatchedHolds).toBe(0)
      const spend = yield* Effect.promise(() =>
        db.query(`SELECT agent_id, spent, held FROM agent_month_spend WHERE org_id = $1`, [org.orgId])
      )
      for (const agent of agents) {
        const row = spend.find((r: any) => r.agent_id === agent.id)
        const mine = BigInt(succeeded.filter((a) => a.agent === agent).length)
        expect(BigInt(row.spent)).toBe(mine * PRICE)
        expect(BigInt(row.held)).toBe(0n)
        expect(BigInt(row.spent) <= M * PRICE).toBe(true)
      }
      const charged = yield* Effect.promise(() =>
        db.query(
          `SELECT status, SUM(charged_credits)::bigint AS charged, count(*)::int AS n FROM gateway_calls
           WHERE org_id = $1 GROUP BY status`,
          [org.orgId]
        )
      )
      for (const row of charged) {
        if (row.status !== "succeeded") expect(row.charged).toBe("0")
        else expect(row.n).toBe(succeeded.length)
      }
      // The hold-side view agrees: captured credits are exactly the successes.
      const captured = yield* Effect.promise(() =>
        db.query(`SELECT COALESCE(SUM(captured), 0) AS captured FROM ledger_holds WHERE org_id = $1`, [org.orgId])
      )
      expect(BigInt(captured[0].captured)).toBe(BigInt(succeeded.length) * PRICE)
    }))
})
