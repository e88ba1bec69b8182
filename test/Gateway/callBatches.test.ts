import { expect, layer } from "@effect/vitest"
import { Effect, Either, Layer, Metric, TestClock, TestContext } from "effect"
import { randomUUID } from "node:crypto"
import { CallId, type HoldId, OrgId } from "../../src/Domain/Ids.js"
import { CallBatches, type CallToHold, type CallToSettle } from "../../src/Services/Gateway/CallBatches.js"
import { Ledger } from "../../src/Services/Ledger/Ledger.js"
import { LedgerStandaloneLive } from "../../src/Services/Ledger/LedgerStandalone.js"
import { roundTrips } from "../../src/Services/Observability/DatabaseMetrics.js"
import { agentOf, seedAgent, seedOrg } from "../support/fixtures.js"
import { serviceTier, SuiteDatabase } from "../support/testLayers.js"

/**
 * The writes of live gateway calls (CallBatches.ts) on the services, over the suite's
 * database: a batch is sent at once (its statements pipelined, one round trip and the
 * commit), and a batch in which something is refused is written step by step instead, so
 * what commits is what the steps in order give.
 */
const PRICE = 100n

/** A live agent of a funded org, and a call of it ready to hold. */
const fundedCall = (credits: bigint) =>
  Effect.gen(function*() {
    const db = yield* SuiteDatabase
    const org = yield* Effect.promise(() => seedOrg(db))
    yield* (yield* Ledger).credit(OrgId.make(org.orgId), credits, "top_up", "test top-up")
    const seeded = yield* Effect.promise(() => seedAgent(db, org.orgId, { mode: "live" }))
    const agent = yield* Effect.promise(() => agentOf(db, seeded.agentId))
    const [endpoint] = yield* Effect.promise(() =>
      db.query(`SELECT id, provider_id FROM catalogue_endpoints ORDER BY id LIMIT 1`)
    )
    const now = new Date()
    const call: CallToHold = {
      agent,
      price: PRICE,
      quota: {
        orgId: org.orgId,
        providerId: endpoint.provider_id,
        dailyCap: 1_000,
        peopleDomain: null,
        day: now.toISOString().slice(0, 10)
      },
      call: {
        id: CallId.make(randomUUID()),
        org_id: agent.org_id,
        agent_id: agent.id,
        endpoint_id: endpoint.id,
        provider_id: endpoint.provider_id,
        mode: "live",
        status: "pending",
        price_credits: PRICE,
        charged_credits: 0n,
        hold_id: null,
        latency_ms: null,
        created_at: now,
        finished_at: null,
        request_sha256: "0".repeat(64),
        response_sha256: null
      }
    }
    return { orgId: org.orgId, call }
  })

/** What a call left in the database: its org's counts, rows and holds. */
const leftBehind = (orgId: string) =>
  Effect.gen(function*() {
    const db = yield* SuiteDatabase
    const [row] = yield* Effect.promise(() =>
      db.query(
        `SELECT (SELECT COALESCE(sum(calls), 0)::int FROM provider_daily_calls WHERE org_id = $1) AS counted,
                (SELECT count(*)::int FROM gateway_calls WHERE org_id = $1) AS rows,
                (SELECT count(*)::int FROM ledger_holds WHERE org_id = $1) AS holds`,
        [orgId]
      )
    )
    return row
  })

/** A call's settlement as a succeeded call charged its price. */
const succeeded = (call: CallToHold, holdId: HoldId): CallToSettle => ({
  callId: call.call.id,
  holdId,
  captured: PRICE,
  finish: {
    id: call.call.id,
    holdId,
    status: "succeeded",
    chargedCredits: PRICE,
    refundedCredits: 0n,
    refundReason: null,
    providerStatus: 200,
    latencyMs: 5,
    finishedAt: new Date(),
    responseSha256: null
  }
})

const roundTripsSoFar = Effect.map(Metric.value(roundTrips), (state) => state.count)

// TestContext given here: a suite's fork may have lost its test services to an earlier suite.
layer(
  serviceTier("call-batches", CallBatches.Default.pipe(Layer.provideMerge(LedgerStandaloneLive))).pipe(
    Layer.provideMerge(TestContext.TestContext)
  )
)((it) => {
  it.effect("holds a lone call in one round trip and its commit, and settles it the same way", () =>
    Effect.gen(function*() {
      yield* TestClock.setTime(Date.now())
      const batches = yield* CallBatches
      const { call, orgId } = yield* fundedCall(10_000_000n) // far above the low-balance alert

      const beforeHold = yield* roundTripsSoFar
      const hold = yield* batches.hold(call)
      expect((yield* roundTripsSoFar) - beforeHold).toBe(2)

      const beforeSettle = yield* roundTripsSoFar
      const settled = yield* batches.settle(succeeded(call, hold.id))
      expect((yield* roundTripsSoFar) - beforeSettle).toBe(2)
      expect(settled).toEqual({ captured: PRICE, released: 0n })
      expect(yield* leftBehind(orgId)).toEqual({ counted: 1, rows: 1, holds: 1 })
      const db = yield* SuiteDatabase
      const [row] = yield* Effect.promise(() =>
        db.query(`SELECT status, charged_credits::text AS charged FROM gateway_calls WHERE id = $1`, [call.call.id])
      )
      expect(row).toEqual({ status: "succeeded", charged: PRICE.toString() })
    }))

  it.effect("writes a batch with a refused call step by step: the refused call leaves nothing, the others are held", () =>
    Effect.gen(function*() {
      yield* TestClock.setTime(Date.now())
      const batches = yield* CallBatches
      const funded = yield* Effect.all([fundedCall(1_000n), fundedCall(1_000n), fundedCall(1_000n)])
      const poor = yield* fundedCall(PRICE - 1n)
      const everyone = [funded[0]!, poor, funded[1]!, funded[2]!]

      const answers = yield* Effect.all(everyone.map(({ call }) => Effect.either(batches.hold(call))), {
        concurrency: "unbounded"
      })
      expect(answers.map(Either.isRight)).toEqual([true, false, true, true])
      const refusal = answers[1]!
      expect(Either.isLeft(refusal) && refusal.left._tag).toBe("insufficient_credits")
      expect(yield* leftBehind(poor.orgId)).toEqual({ counted: 0, rows: 0, holds: 0 })
      for (const { orgId } of funded) expect(yield* leftBehind(orgId)).toEqual({ counted: 1, rows: 1, holds: 1 })
    }))

  it.effect("settles a batch with a hold already settled step by step: only the rows of settled holds are finished", () =>
    Effect.gen(function*() {
      yield* TestClock.setTime(Date.now())
      const batches = yield* CallBatches
      const ledger = yield* Ledger
      const first = yield* fundedCall(1_000n)
      const second = yield* fundedCall(1_000n)
      const [held1, held2] = yield* Effect.all([batches.hold(first.call), batches.hold(second.call)])
      // The sweeper got to the first hold before its call settled.
      yield* ledger.release(held1.id)
      const answers = yield* Effect.all(
        [
          Effect.either(batches.settle(succeeded(first.call, held1.id))),
          Effect.either(batches.settle(succeeded(second.call, held2.id)))
        ],
        { concurrency: "unbounded" }
      )
      expect(answers.map(Either.isRight)).toEqual([false, true])
      const db = yield* SuiteDatabase
      const rows = yield* Effect.promise(() =>
        db.query(`SELECT id, status FROM gateway_calls WHERE id = ANY($1) ORDER BY status`, [[
          first.call.call.id,
          second.call.call.id
        ]])
      )
      expect(rows).toEqual([
        { id: first.call.call.id, status: "pending" },
        { id: second.call.call.id, status: "succeeded" }
      ])
    }))
})
