import { SqlClient } from "@effect/sql"
import { Effect, type ManagedRuntime } from "effect"
import { randomUUID } from "node:crypto"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { ItemsRepo } from "../../src/Services/Purchasing/ItemsRepo.js"
import { type PlanCacheMode, planTestDatabase, rowsReadRolledBack } from "../support/queryPlan.js"

/**
 * The check that a runner still holds a single item's claim (the gate of its one-statement
 * settlement) when many items are open and the table's statistics were taken before they
 * were (a young table and a large job, or a prepared statement's generic plan): the item must
 * be found by key, not by reading every open item through the partial index of open items.
 */
const OPEN = 2_000
const OWNER = "worker:plan"

let close: () => Promise<void>
let runtime: ManagedRuntime.ManagedRuntime<ItemsRepo | SqlClient.SqlClient, unknown>
let claimed: ReadonlyArray<string>

beforeAll(async () => {
  const planned = await planTestDatabase("item_claim_plan", ItemsRepo.Default)
  runtime = planned.runtime
  close = planned.close
  claimed = await runtime.runPromise(Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const receipt = (count: number) =>
      Effect.gen(function*() {
        const id = randomUUID()
        yield* sql`
          INSERT INTO receipts (id, org_id, agent_id, mode, tool_id, task_type, price_credits, item_count, held_credits,
                                fallback, status, created_at)
          VALUES (${id}, ${randomUUID()}, ${randomUUID()}, 'test', ${randomUUID()}, 'web_extract', 3, ${count},
                  ${3 * count}, false, 'running', now())`
        return id
      })
    const items = (receiptId: string, count: number, status: string) =>
      sql`
        INSERT INTO receipt_items (id, receipt_id, idx, input, status, hold_id, claimed_by, runs)
        SELECT gen_random_uuid(), ${receiptId}, n, '{}'::jsonb, ${status}, gen_random_uuid(), ${OWNER}, 1
        FROM generate_series(0, ${count - 1}) AS n`
    // A few finished items, then the statistics, then a large job's items open.
    yield* items(yield* receipt(10), 10, "passed")
    yield* sql`ANALYZE receipt_items`
    const job = yield* receipt(1_000)
    yield* items(job, OPEN / 2, "running")
    yield* items(yield* receipt(1_000), OPEN / 2, "pending")
    const rows = yield* sql<
      { id: string }
    >`SELECT id FROM receipt_items WHERE receipt_id = ${job} ORDER BY idx LIMIT 25`
    return rows.map((row) => row.id)
  }))
}, 60_000)

afterAll(async () => {
  await close?.()
})

/** The items a settlement's lock of its claimed items reads (ItemsRepo.lockClaimedItems), rolled back. */
const itemsReadByLock = (planCacheMode: PlanCacheMode, itemId: string) =>
  runtime.runPromise(
    Effect.flatMap(ItemsRepo, (repo) =>
      rowsReadRolledBack(planCacheMode, "receipt_items", repo.lockClaimedItems([itemId], OWNER)))
  )

describe("a settlement's lock of its claimed items", () => {
  it.each(["auto", "force_generic_plan"] as const)(
    "finds its item by key (%s) among 2,000 open items the statistics do not know",
    async (mode) => {
      // The item itself (its lock reads it once more); reading the open items reads 2,000.
      expect(await itemsReadByLock(mode, claimed[0]!)).toBeLessThanOrEqual(2)
    }
  )
})
