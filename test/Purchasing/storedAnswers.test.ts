import { NodeContext } from "@effect/platform-node"
import { Migrator } from "@effect/sql"
import { PgClient } from "@effect/sql-pg"
import { describe, expect, it } from "@effect/vitest"
import { Effect, Layer, Redacted } from "effect"
import { randomUUID } from "node:crypto"
import { afterAll, beforeAll } from "vitest"
import { CheckFailed, ProviderError } from "../../src/Errors/ApiErrors.js"
import { runMigrations } from "../../src/Layers/Migrations.js"
import { migrations } from "../../src/Layers/migrations/index.js"
import { answerFromStore, storedAnswerOf } from "../../src/Services/Purchasing/Answers.js"
import { createTestDatabase, type TestDatabase } from "../support/database.js"

/**
 * A purchase's idempotency key keeps its answer as a typed value (the JSON of
 * `PurchaseAnswer`): what it keeps decodes back to the same value, and keys kept as HTTP
 * status and wire body before migration 0010 are converted, so their replays still answer.
 */
let db: TestDatabase

beforeAll(async () => {
  db = await createTestDatabase("stored_answers", { empty: true })
})

afterAll(async () => {
  await db?.drop()
})

const onDatabase = <A, E>(effect: Effect.Effect<A, E, any>) =>
  effect.pipe(
    Effect.provide(
      PgClient.layer({ url: Redacted.make(db.url), maxConnections: 1 }).pipe(Layer.provideMerge(NodeContext.layer))
    )
  ) as Effect.Effect<A, E>

const result = {
  status: "done" as const,
  receipt_id: randomUUID(),
  mode: "test" as const,
  tool: { id: randomUUID(), slug: "jina-reader", name: "Jina Reader", provider: "jina" },
  item_count: 1,
  charged: { credits: "3", usd: "0.003" },
  counts: { passed: 1, partial: 0, failed: 0, expired: 0, pending: 0 },
  fallback_used: false,
  items: []
}

describe("stored purchase answers", () => {
  it.effect("a kept answer decodes to the same value and encodes to the same bytes", () =>
    Effect.gen(function*() {
      const failed = new CheckFailed({
        message: "The result failed the published check",
        reason: "empty",
        receipt_id: randomUUID(),
        check: { id: "chk", version: "1" },
        items: [{ index: 0, reason: "empty" }]
      })
      for (const answer of [result, failed, new ProviderError({ message: "upstream down" })]) {
        const stored = yield* storedAnswerOf(answer)
        const back = yield* answerFromStore(stored)
        expect(back).toEqual(answer)
        expect(yield* storedAnswerOf(back)).toBe(stored)
      }
    }))

  it.effect("migration 0010 converts answers kept as status and wire body", () =>
    onDatabase(Effect.gen(function*() {
      const before = Object.fromEntries(
        Object.entries(migrations).filter(([id]) => Number(id.split("_", 1)[0]) < 10)
      )
      yield* Migrator.make({})({ loader: Migrator.fromRecord(before) })
      const sql = yield* PgClient.PgClient
      const agentId = randomUUID()
      const keep = (key: string, status: number, body: unknown) =>
        sql`
          INSERT INTO idempotency_keys (agent_id, key, fingerprint, status, response_status, response_body,
                                        receipt_id, created_at, expires_at)
          VALUES (${agentId}, ${key}, 'f', 'done', ${status}, ${JSON.stringify(body)}, ${randomUUID()}, now(),
                  now() + interval '1 day')`
      const job = {
        status: "queued",
        job_id: randomUUID(),
        receipt_id: randomUUID(),
        item_count: 40,
        held: { credits: "120", usd: "0.120" },
        deadline_at: "2026-11-25T12:00:00.000Z"
      }
      const check = { id: "chk", version: "1" }
      yield* keep("result", 200, result)
      yield* keep("job", 202, job)
      yield* keep("check", 200, {
        error: {
          code: "check_failed",
          message: "failed",
          doc_url: "http://x/docs/errors#check_failed",
          retryable: false
        },
        reason: "empty",
        receipt_id: job.receipt_id,
        check,
        items: [{ index: 0, reason: "empty" }]
      })
      yield* keep("provider", 502, {
        error: {
          code: "provider_error",
          message: "down",
          doc_url: "http://x/docs/errors#provider_error",
          retryable: true
        }
      })

      yield* runMigrations
      const rows = yield* sql<{ key: string; answer: string }>`
        SELECT key, answer FROM idempotency_keys WHERE agent_id = ${agentId}`
      const answers = new Map<string, unknown>()
      for (const row of rows) answers.set(row.key, yield* answerFromStore(row.answer))
      expect(answers.get("result")).toEqual(result)
      expect(answers.get("job")).toEqual(job)
      expect(answers.get("check")).toEqual(
        new CheckFailed({
          message: "failed",
          reason: "empty",
          receipt_id: job.receipt_id,
          check,
          items: [{ index: 0, reason: "empty" }]
        })
      )
      expect(answers.get("provider")).toEqual(new ProviderError({ message: "down" }))
    })))
})
