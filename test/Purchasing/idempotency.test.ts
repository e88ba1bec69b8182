import { expect, layer } from "@effect/vitest"
import { Effect, Either, Fiber, Schema } from "effect"
import type { AuthenticatedAgent } from "../../src/Domain/Current.js"
import { ExecuteRequest } from "../../src/Domain/Purchasing.js"
import { errorCatalogue } from "../../src/Errors/ErrorCatalogue.js"
import { Execute } from "../../src/Services/Purchasing/Execute.js"
import { eventuallyEffect } from "../support/eventually.js"
import { agentOf } from "../support/fixtures.js"
import { inRealTime, PurchasingServices, serviceTier, SuiteDatabase } from "../support/testLayers.js"
import { emailFindInput, seedBuyer } from "./support.js"

/**
 * Idempotency keys on the Execute service, without HTTP (the wire of execute's answers is in
 * execute.test.ts). Mock tools take 300 ms a try here (real time), so a request is still
 * running when its twins arrive. A request is decoded as the route decodes its body.
 */
const rows = (text: string, values: ReadonlyArray<unknown>) =>
  Effect.flatMap(SuiteDatabase, (db) => Effect.promise(() => db.query(text, values)))
const receiptsOf = (agentId: string) => rows(`SELECT id FROM receipts WHERE agent_id = $1`, [agentId])
const spentOf = (agentId: string) =>
  Effect.map(
    rows(`SELECT spent FROM agent_month_spend WHERE agent_id = $1`, [agentId]),
    (found) => BigInt(found[0]?.spent ?? 0)
  )

/** A buyer (an org and its test agent) and the agent as its key's check reads it. */
const buyer = Effect.gen(function*() {
  const db = yield* SuiteDatabase
  const seeded = yield* Effect.promise(() => seedBuyer({ db }))
  return { ...seeded, current: yield* Effect.promise(() => agentOf(db, seeded.agent.agentId)) }
})

/** POST /v1/execute's body through the service: the answer, or the typed error. */
const execute = (agent: AuthenticatedAgent, body: unknown) =>
  Effect.flatMap(
    Schema.decodeUnknown(ExecuteRequest)(body).pipe(Effect.orDie),
    (request) =>
      Effect.either(Effect.flatMap(Execute, (execute) => execute.execute(agent, request, "http://localhost")))
  )

/** The error code of a refusal, with the catalogue's retryable flag it goes out with. */
const refusal = (answer: Either.Either<unknown, { readonly _tag: string }>) => {
  if (Either.isRight(answer)) throw new Error(`expected a refusal, got ${JSON.stringify(answer.right)}`)
  const code = answer.left._tag as keyof typeof errorCatalogue
  return { code, retryable: errorCatalogue[code].retryable }
}

/** The answer of a purchase that went ahead. */
const answered = <A>(answer: Either.Either<A, { readonly _tag: string }>): A => {
  if (Either.isLeft(answer)) throw new Error(`expected an answer, got ${answer.left._tag}`)
  return answer.right
}

layer(serviceTier("pidem", PurchasingServices, { MOCK_TOOL_LATENCY_MS: "300" }))("idempotency keys", (it) => {
  it.effect("returns the first answer for the same key and request, and charges once", () =>
    inRealTime(Effect.gen(function*() {
      const { agent, current } = yield* buyer
      const body = { tool: "hunter-email-finder", inputs: [emailFindInput(1)], idempotency_key: "order-1" }
      const first = answered(yield* execute(current, body))
      const again = answered(yield* execute(current, body))
      expect(again).toEqual(first)
      expect(yield* receiptsOf(agent.agentId)).toHaveLength(1)
      expect(yield* spentOf(agent.agentId)).toBe(40n)
    })))

  it.effect("answers idempotency_conflict for a different request under the same key", () =>
    inRealTime(Effect.gen(function*() {
      const { agent, current } = yield* buyer
      const body = { tool: "hunter-email-finder", inputs: [emailFindInput(1)], idempotency_key: "order-2" }
      answered(yield* execute(current, body))
      for (
        const changed of [
          { ...body, inputs: [emailFindInput(2)] },
          { ...body, tool: "prospeo-email-finder" },
          { ...body, max_price: 100 },
          { ...body, fallback: true }
        ]
      ) {
        expect(refusal(yield* execute(current, changed))).toEqual({ code: "idempotency_conflict", retryable: false })
      }
      expect(yield* receiptsOf(agent.agentId)).toHaveLength(1)
    })))

  it.effect("keys belong to an agent: another agent's same key is another purchase", () =>
    inRealTime(Effect.gen(function*() {
      const a = yield* buyer
      const b = yield* buyer
      const body = { tool: "hunter-email-finder", inputs: [emailFindInput(1)], idempotency_key: "shared" }
      answered(yield* execute(a.current, body))
      answered(yield* execute(b.current, body))
      expect(yield* receiptsOf(b.agent.agentId)).toHaveLength(1)
    })))

  it.effect("answers request_in_progress (retryable) while the first request runs", () =>
    inRealTime(Effect.gen(function*() {
      const { agent, current } = yield* buyer
      const body = { tool: "hunter-email-finder", inputs: [emailFindInput(1)], idempotency_key: "order-3" }
      const first = yield* Effect.fork(execute(current, body))
      // The first holds the key (its row written) before its twin arrives.
      yield* eventuallyEffect(
        Effect.map(
          rows(`SELECT 1 FROM idempotency_keys WHERE agent_id = $1 AND key = $2`, [agent.agentId, "order-3"]),
          (found) => found.length > 0
        ),
        { what: "the first request's key" }
      )
      expect(refusal(yield* execute(current, body))).toEqual({ code: "request_in_progress", retryable: true })
      const firstAnswer = answered(yield* Fiber.join(first))
      expect(answered(yield* execute(current, body))).toEqual(firstAnswer)
    })))

  it.effect("makes exactly one purchase when many clients send the same request at once", () =>
    inRealTime(Effect.gen(function*() {
      const { agent, current } = yield* buyer
      const body = {
        tool: "hunter-email-finder",
        inputs: [emailFindInput(1), emailFindInput(2), emailFindInput(3)],
        idempotency_key: "burst"
      }
      const answers = yield* Effect.all(Array.from({ length: 30 }, () => execute(current, body)), {
        concurrency: "unbounded"
      })
      expect(answers.filter(Either.isLeft).every((a) => a.left._tag === "request_in_progress")).toBe(true)
      const successes = answers.filter(Either.isRight).map((a) => a.right)
      expect(successes.length).toBeGreaterThanOrEqual(1)
      // Every one that was answered got the same answer.
      for (const success of successes) expect(success).toEqual(successes[0])
      expect(yield* receiptsOf(agent.agentId)).toHaveLength(1)
      expect(yield* spentOf(agent.agentId)).toBe(120n)
      const holds = yield* rows(`SELECT count(*)::int AS n FROM ledger_holds WHERE agent_id = $1`, [agent.agentId])
      expect(holds[0].n).toBe(3)
      // Once it finished, everyone gets the first answer.
      expect(answered(yield* execute(current, body))).toEqual(successes[0])
    })))

  it.effect("keeps a check_failed answer and a job's answer (202) under the key", () =>
    inRealTime(Effect.gen(function*() {
      const { agent, current } = yield* buyer
      const failed = { tool: "hunter-email-finder", inputs: [emailFindInput(1, "mock-fail")], idempotency_key: "cf" }
      const first = answered(yield* execute(current, failed))
      expect((first as { readonly _tag?: string })._tag).toBe("check_failed")
      expect(answered(yield* execute(current, failed))).toEqual(first)
      const job = {
        tool: "jina-reader",
        inputs: Array.from({ length: 30 }, (_, i) => ({ url: `https://news.example.com/${i}` })),
        idempotency_key: "job"
      }
      const accepted = answered(yield* execute(current, job))
      expect(accepted).toMatchObject({ status: "queued", item_count: 30 })
      expect(answered(yield* execute(current, job))).toEqual(accepted)
      expect(yield* rows(`SELECT id FROM purchase_jobs WHERE agent_id = $1`, [agent.agentId])).toHaveLength(1)
    })))

  it.effect("keeps nothing for a refusal or a provider_error, so a retry under the key runs again", () =>
    inRealTime(Effect.gen(function*() {
      const { agent, current } = yield* buyer
      const capped = { tool: "hunter-email-finder", inputs: [emailFindInput(1)], max_price: 10, idempotency_key: "k" }
      expect(refusal(yield* execute(current, capped)).code).toBe("price_above_max")
      // The key is free again: the same key with a corrected request is a new purchase.
      answered(yield* execute(current, { ...capped, max_price: 40 }))
      const down = {
        tool: "hunter-email-finder",
        inputs: [emailFindInput(2, "mock-provider-error")],
        idempotency_key: "p"
      }
      expect(refusal(yield* execute(current, down)).code).toBe("provider_error")
      expect(refusal(yield* execute(current, down)).code).toBe("provider_error")
      expect(yield* receiptsOf(agent.agentId)).toHaveLength(3)
      expect(yield* spentOf(agent.agentId)).toBe(40n)
    })))

  it.effect("replays a used key even when the request would now be refused or need an approval, asking nothing", () =>
    inRealTime(Effect.gen(function*() {
      // The key is not read before the purchase is checked (Execute.ts): these prove the
      // checks that refuse or ask before the write look at the key first.
      const { agent, current } = yield* buyer
      const body = { tool: "hunter-email-finder", inputs: [emailFindInput(1)], idempotency_key: "before-rules" }
      const first = answered(yield* execute(current, body))
      // approval_id is not part of the request's fingerprint: an unknown one refuses only a new key.
      const unknownApproval = { ...body, approval_id: "7d7a4a52-4f7e-4b59-9d3a-2a8f3c1f0e11" }
      expect(answered(yield* execute(current, unknownApproval))).toEqual(first)
      expect(refusal(yield* execute(current, { ...unknownApproval, idempotency_key: "fresh-1" })).code).toBe(
        "not_found"
      )
      // Every purchase now needs an approval: the used key still replays, and none is asked for.
      yield* rows(`UPDATE agents SET approval_threshold_credits = 1 WHERE id = $1`, [agent.agentId])
      const db = yield* SuiteDatabase
      const now = yield* Effect.promise(() => agentOf(db, agent.agentId))
      expect(answered(yield* execute(now, body))).toEqual(first)
      const approvalsOf = rows(`SELECT id FROM purchase_approvals WHERE agent_id = $1`, [agent.agentId])
      expect(yield* approvalsOf).toHaveLength(0)
      const asked = answered(yield* execute(now, { ...body, idempotency_key: "fresh-2" }))
      expect((asked as { readonly _tag?: string })._tag).toBe("approval_required")
      expect(yield* approvalsOf).toHaveLength(1)
      expect(yield* receiptsOf(agent.agentId)).toHaveLength(1)
    })))

  it.effect("keeps keys at least 24 hours", () =>
    inRealTime(Effect.gen(function*() {
      const { agent, current } = yield* buyer
      answered(
        yield* execute(current, { tool: "hunter-email-finder", inputs: [emailFindInput(1)], idempotency_key: "kept" })
      )
      const [row] = yield* rows(
        `SELECT extract(epoch FROM expires_at - created_at)::int AS seconds FROM idempotency_keys WHERE agent_id = $1`,
        [agent.agentId]
      )
      expect(row.seconds).toBeGreaterThanOrEqual(24 * 3600)
    })))
})
