import { SqlClient } from "@effect/sql"
import { Effect, type ManagedRuntime } from "effect"
import { randomUUID } from "node:crypto"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { CallId, HoldId } from "../../src/Domain/Ids.js"
import { GatewayRepo } from "../../src/Services/Gateway/GatewayRepo.js"
import { type PlanCacheMode, planTestDatabase, rowsReadRolledBack } from "../support/queryPlan.js"

/**
 * A gateway call row's completion (written in its settlement's transaction) when many calls
 * are in flight and the table's statistics were taken before they were (a burst of traffic,
 * a slow provider, or a prepared statement's generic plan): the row must be found by its
 * key, not by reading every pending call through the partial index of pending calls.
 */
const PENDING = 2_000

let close: () => Promise<void>
let runtime: ManagedRuntime.ManagedRuntime<GatewayRepo | SqlClient.SqlClient, unknown>
let lastPending: string

beforeAll(async () => {
  const planned = await planTestDatabase("call_finish_plan", GatewayRepo.Default)
  runtime = planned.runtime
  close = planned.close
  lastPending = await runtime.runPromise(Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const calls = (count: number, status: string) =>
      sql`
        INSERT INTO gateway_calls (id, org_id, agent_id, endpoint_id, provider_id, mode, status, price_credits, created_at)
        SELECT gen_random_uuid(), ${randomUUID()}, ${randomUUID()}, 'prov/endpoint', 'prov', 'live', ${status}, 10,
               now() - make_interval(secs => n)
        FROM generate_series(1, ${count}) AS n`
    // A few finished calls, then the statistics, then many calls in flight.
    yield* calls(10, "succeeded")
    yield* sql`ANALYZE gateway_calls`
    yield* calls(PENDING, "pending")
    const [last] = yield* sql<{ id: string }>`
      SELECT id FROM gateway_calls WHERE status = 'pending' ORDER BY created_at LIMIT 1`
    return last!.id
  }))
}, 60_000)

afterAll(async () => {
  await close?.()
})

/** The call rows a completion reads, in a transaction it rolls back. */
const rowsReadByFinish = (planCacheMode: PlanCacheMode) =>
  runtime.runPromise(
    Effect.flatMap(GatewayRepo, (repo) =>
      rowsReadRolledBack(
        planCacheMode,
        "gateway_calls",
        repo.finishCalls([{
          id: CallId.make(lastPending),
          holdId: HoldId.make(randomUUID()),
          status: "succeeded",
          chargedCredits: 10n,
          refundedCredits: 0n,
          refundReason: null,
          providerStatus: 200,
          latencyMs: 12,
          finishedAt: new Date(),
          responseSha256: null
        }])
      ))
  )

describe("a gateway call row's completion", () => {
  it.each(["auto", "force_generic_plan"] as const)(
    "finds its row by key (%s) among 2,000 calls in flight the statistics do not know",
    async (mode) => {
      // The row itself (its update reads it once more); reading the calls in flight reads 2,000.
      expect(await rowsReadByFinish(mode)).toBeLessThanOrEqual(4)
    }
  )
})
