import { NodeContext } from "@effect/platform-node"
import { SqlClient } from "@effect/sql"
import { PgClient } from "@effect/sql-pg"
import { Effect, Layer, ManagedRuntime, Redacted } from "effect"
import { randomUUID } from "node:crypto"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { MigrationsLive } from "../../src/Layers/Migrations.js"
import { deliveryClaimStatement } from "../../src/Services/Webhooks/DeliveryClaim.js"
import { type DeliveryOutcome, deliveryOutcomeWriter } from "../../src/Services/Webhooks/DeliveryOutcomes.js"
import { createTestDatabase, type TestDatabase } from "../support/database.js"
import { seedOrg } from "../support/fixtures.js"
import { explainRolledBack, type PlanCacheMode, rowsRead } from "../support/queryPlan.js"

/**
 * The delivery worker's two statements on real PostgreSQL.
 *
 * The claim's plan: after an outage the backlog is written while the table's
 * statistics still describe it nearly empty. The claim must then still look each chosen row
 * up by its primary key, not read the backlog once per candidate (it did: a claim took 100 ms
 * for 4,000 due rows and the drain fell to 200 deliveries a second).
 *
 * The outcome writer: tries finishing at once are written together, each row with its own
 * outcome, and an outcome under a lease the row no longer has changes nothing.
 */
const BACKLOG = 4_000
const LIMIT = 64

let db: TestDatabase
let runtime: ManagedRuntime.ManagedRuntime<SqlClient.SqlClient, unknown>

beforeAll(async () => {
  db = await createTestDatabase("delivery_claim")
  runtime = ManagedRuntime.make(
    MigrationsLive.pipe(
      Layer.provideMerge(PgClient.layer({ url: Redacted.make(db.url), maxConnections: 1 })),
      Layer.provide(NodeContext.layer)
    )
  )
  await runtime.runPromise(Effect.void)
  const org = await seedOrg(db)
  const endpointId = randomUUID()
  await db.query(
    `INSERT INTO webhook_endpoints (id, org_id, url, secret_enc, secret_prefix, created_at)
     VALUES ($1, $2, 'http://127.0.0.1:9/hook', 'sealed', 'whsec_x', now())`,
    [endpointId, org.orgId]
  )
  const deliveries = (count: number, status: "delivered" | "pending") =>
    db.query(
      `WITH e AS (
         INSERT INTO events (id, org_id, type, data, created_at)
         SELECT gen_random_uuid(), $2, 'job.completed', '{}', now() - interval '1 minute' FROM generate_series(1, $3::int)
         RETURNING id, created_at)
       INSERT INTO webhook_deliveries (id, org_id, endpoint_id, event_id, status, next_attempt_at, created_at)
       SELECT gen_random_uuid(), $2, $1, e.id, $4, CASE WHEN $4 = 'pending' THEN e.created_at END, e.created_at FROM e`,
      [endpointId, org.orgId, count, status]
    )
  // Statistics taken while a few deliveries are done and none is pending, then the backlog arrives.
  await deliveries(10, "delivered")
  await db.query(`ANALYZE`)
  await deliveries(BACKLOG, "pending")
}, 60_000)

afterAll(async () => {
  await runtime?.dispose()
  await db?.drop()
})

/** Runs the claim under EXPLAIN ANALYZE in a transaction it rolls back. */
const explainClaim = (planCacheMode: PlanCacheMode) =>
  runtime.runPromise(explainRolledBack(planCacheMode, (sql) => {
    const now = Date.now()
    return deliveryClaimStatement(sql, {
      at: new Date(now),
      limit: LIMIT,
      busy: [],
      perEndpoint: LIMIT,
      leaseUntil: new Date(now + 60_000),
      leaseToken: randomUUID()
    })
  }))

describe("the webhook delivery claim", () => {
  it.each(["auto", "force_generic_plan"] as const)(
    "takes %s a batch from a backlog its statistics do not know, reading each chosen row once",
    async (mode) => {
      const plan = await explainClaim(mode)
      expect(plan["Actual Rows"]).toBe(LIMIT)
      // The due rows at most once (for the candidates, 8 a claimed row), then each candidate
      // by its key, and the claimed rows written. Reading the backlog per candidate reads a million.
      expect(rowsRead(plan, "webhook_deliveries")).toBeLessThanOrEqual(BACKLOG + LIMIT * 8 + 2 * LIMIT)
    }
  )
})

describe("the webhook delivery outcome writer", () => {
  it("writes tries that finish together, each row its own outcome, and ignores a stale lease", async () => {
    const claimed = await runtime.runPromise(Effect.gen(function*() {
      const sql = yield* SqlClient.SqlClient
      const now = Date.now()
      return yield* sql<{ id: string; lease_token: string }>`${
        deliveryClaimStatement(sql, {
          at: new Date(now),
          limit: 40,
          busy: [],
          perEndpoint: 40,
          leaseUntil: new Date(now + 60_000),
          leaseToken: randomUUID()
        })
      }`
    }))
    expect(claimed).toHaveLength(40)
    const at = new Date("2026-11-26T12:00:00Z")
    const outcomes: Array<DeliveryOutcome> = claimed.map((row, i) => ({
      id: row.id,
      leaseToken: i === 39 ? randomUUID() : row.lease_token,
      status: i % 2 === 0 ? "delivered" : "pending",
      attempts: i + 1,
      lastAttemptAt: at,
      lastStatusCode: i % 2 === 0 ? 200 : 500 + (i % 4),
      lastError: i % 2 === 0 ? null : `HTTP ${500 + (i % 4)}`,
      deliveredAt: i % 2 === 0 ? at : null,
      nextAttemptAt: i % 2 === 0 ? null : new Date(at.getTime() + i * 60_000)
    }))
    await runtime.runPromise(Effect.scoped(Effect.gen(function*() {
      const write = yield* deliveryOutcomeWriter(yield* SqlClient.SqlClient)
      yield* Effect.forEach(outcomes, write, { concurrency: "unbounded", discard: true })
    })))
    const rows = await db.query<{
      id: string
      status: string
      attempts: number
      last_status_code: number | null
      last_error: string | null
      delivered_at: Date | null
      next_attempt_at: Date | null
      lease_token: string | null
    }>(
      `SELECT id, status, attempts, last_status_code, last_error, delivered_at, next_attempt_at, lease_token
       FROM webhook_deliveries WHERE id = ANY ($1)`,
      [claimed.map((row) => row.id)]
    )
    const byId = new Map(rows.map((row) => [row.id, row]))
    outcomes.forEach((outcome, i) => {
      const row = byId.get(outcome.id)!
      if (i === 39) {
        expect(row).toMatchObject({
          status: "pending",
          attempts: 0,
          last_status_code: null,
          lease_token: claimed[i]!.lease_token
        })
        return
      }
      expect(row).toMatchObject({
        status: outcome.status,
        attempts: outcome.attempts,
        last_status_code: outcome.lastStatusCode,
        last_error: outcome.lastError,
        delivered_at: outcome.deliveredAt,
        next_attempt_at: outcome.nextAttemptAt,
        lease_token: null
      })
    })
  })
})
