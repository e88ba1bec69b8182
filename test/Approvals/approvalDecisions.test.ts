import { expect, layer } from "@effect/vitest"
import { Effect, Either, Layer } from "effect"
import type { AuthenticatedAgent } from "../../src/Domain/Current.js"
import { ApprovalId } from "../../src/Domain/Ids.js"
import type { ExecuteRequest } from "../../src/Domain/Purchasing.js"
import { ApprovalRequired } from "../../src/Errors/ApiErrors.js"
import { Approvals } from "../../src/Services/Approvals/Approvals.js"
import { Events } from "../../src/Services/Events/Events.js"
import { MailOutboxLive } from "../../src/Services/Mailer/MailOutboxLive.js"
import { Execute } from "../../src/Services/Purchasing/Execute.js"
import { PurchasingLive } from "../../src/Services/Purchasing/PurchasingLive.js"
import { emailFindInput, eventsOf } from "../Purchasing/support.js"
import { actorOf, agentOf, seedAgent, seedOrg } from "../support/fixtures.js"
import { serviceTier, SuiteDatabase } from "../support/testLayers.js"

/**
 * Budgets and approvals as rules, on the purchasing services over the suite's database and
 * without HTTP: when a purchase asks (over the threshold, over the month's budget), what an
 * approval then pays for (the same tool, inputs and amount, once, within 24 hours), and what
 * a rejection or an expiry answers. The routes' statuses and bodies are
 * `approvals.test.ts`'s.
 */
const threeInputs = [emailFindInput(1), emailFindInput(2), emailFindInput(3)]
const request: ExecuteRequest = { tool: "hunter-email-finder", inputs: threeInputs }

/** An org with an owner and an agent whose threshold is 100 credits (or as given). */
const seedApprovalOrg = (agentOptions: Parameters<typeof seedAgent>[2] = {}) =>
  Effect.gen(function*() {
    const db = yield* SuiteDatabase
    const org = yield* Effect.promise(() => seedOrg(db))
    const seeded = yield* Effect.promise(() =>
      seedAgent(db, org.orgId, { approvalThresholdCredits: 100n, monthlyBudgetCredits: 1_000_000n, ...agentOptions })
    )
    const agent = yield* Effect.promise(() => agentOf(db, seeded.agentId))
    return { org, owner: actorOf(org), agent }
  })

/** What execute answers `agent`: the purchase, or the refusal with its code. */
const execute = (agent: AuthenticatedAgent, body: ExecuteRequest) =>
  Effect.flatMap(Execute, (service) => Effect.either(service.execute(agent, body, "http://localhost")))

/** Asks for an approval: the purchase must be refused with `approval_required`. */
const ask = (agent: AuthenticatedAgent, body: ExecuteRequest = request) =>
  Effect.gen(function*() {
    const answer = yield* execute(agent, body)
    if (Either.isLeft(answer) || !(answer.right instanceof ApprovalRequired)) {
      return yield* Effect.die(`expected approval_required, got ${codeOf(answer)}`)
    }
    return { ...answer.right.approval, id: ApprovalId.make(answer.right.approval.id) }
  })

/** The refusal's code (the error's tag), `approval_required`, or "ok" when the purchase went through. */
const codeOf = <A, E extends { readonly _tag: string }>(answer: Either.Either<A, E>) =>
  Either.isLeft(answer) ? answer.left._tag : answer.right instanceof ApprovalRequired ? answer.right._tag : "ok"

const decide = (
  owner: ReturnType<typeof actorOf>,
  id: ApprovalId,
  decision: "approve" | "reject",
  note: string | null = null
) => Effect.flatMap(Approvals, (approvals) => Effect.either(approvals.decide(owner, id, decision, note)))

const rows = (text: string, values: ReadonlyArray<unknown>) =>
  Effect.flatMap(SuiteDatabase, (db) => Effect.promise(() => db.query(text, values)))

layer(
  serviceTier(
    "approval_rules",
    PurchasingLive.pipe(Layer.provideMerge(Events.Default), Layer.provideMerge(MailOutboxLive))
  ),
  {
    excludeTestServices: true
  }
)((it) => {
  it.effect("answers approval_mismatch when tool, inputs or amount differ from what was approved", () =>
    Effect.gen(function*() {
      const o = yield* seedApprovalOrg()
      const approval = yield* ask(o.agent)
      const approved = yield* decide(o.owner, approval.id, "approve", "ok for this batch")
      expect(Either.getOrThrow(approved)).toMatchObject({
        status: "approved",
        note: "ok for this batch",
        decided_via: "session"
      })
      for (
        const changed of [
          { ...request, inputs: [emailFindInput(1), emailFindInput(2), emailFindInput(4)] },
          { ...request, tool: "prospeo-email-finder" },
          { ...request, inputs: [...threeInputs, emailFindInput(5)] }
        ]
      ) {
        expect(codeOf(yield* execute(o.agent, { ...changed, approval_id: approval.id }))).toBe("approval_mismatch")
      }
      expect(codeOf(yield* execute(o.agent, { ...request, approval_id: approval.id }))).toBe("ok")
    }))

  it.effect("a rejection: the retry answers approval_rejected with the note; deciding twice is a conflict", () =>
    Effect.gen(function*() {
      const o = yield* seedApprovalOrg()
      const approval = yield* ask(o.agent)
      const rejected = yield* decide(o.owner, approval.id, "reject", "too many")
      expect(Either.getOrThrow(rejected)).toMatchObject({ status: "rejected", decided_via: "session" })
      const db = yield* SuiteDatabase
      expect((yield* Effect.promise(() => eventsOf(db, o.org.orgId, "approval.decided"))).at(-1)).toEqual({
        approval_id: approval.id,
        agent_id: o.agent.id,
        status: "rejected",
        note: "too many"
      })
      const retry = yield* execute(o.agent, { ...request, approval_id: approval.id })
      expect(codeOf(retry)).toBe("approval_rejected")
      expect(Either.isLeft(retry) && retry.left.message).toContain("too many")
      for (const verb of ["approve", "reject"] as const) {
        expect(codeOf(yield* decide(o.owner, approval.id, verb))).toBe("conflict")
      }
    }))

  it.effect("asks with reason over_budget when the purchase would pass the monthly budget, and lets an approved one past it", () =>
    Effect.gen(function*() {
      const o = yield* seedApprovalOrg({ approvalThresholdCredits: null, monthlyBudgetCredits: 100n })
      const approval = yield* ask(o.agent)
      expect(approval.reason).toBe("over_budget")
      yield* decide(o.owner, approval.id, "approve")
      expect(codeOf(yield* execute(o.agent, { ...request, approval_id: approval.id }))).toBe("ok")
      expect(yield* rows(`SELECT spent FROM agent_month_spend WHERE agent_id = $1`, [o.agent.id])).toEqual([{
        spent: "120"
      }])
      // A threshold of null never asks.
      const open = yield* seedApprovalOrg({ approvalThresholdCredits: null, monthlyBudgetCredits: 10_000_000n })
      expect(codeOf(yield* execute(open.agent, request))).toBe("ok")
    }))

  it.effect("asks with reason over_budget when the month's spend so far leaves too little, writing nothing", () =>
    Effect.gen(function*() {
      const o = yield* seedApprovalOrg({ approvalThresholdCredits: null, monthlyBudgetCredits: 150n })
      expect(codeOf(yield* execute(o.agent, request))).toBe("ok")
      // 120 spent of 150: another 120 fits no more (each alone would), so the owners are asked.
      const approval = yield* ask(o.agent, { ...request, idempotency_key: "second-batch" })
      expect(approval.reason).toBe("over_budget")
      expect(approval.amount.credits).toBe("120")
      expect(yield* rows(`SELECT 1 FROM receipts WHERE agent_id = $1`, [o.agent.id])).toHaveLength(1)
      expect(yield* rows(`SELECT 1 FROM idempotency_keys WHERE agent_id = $1`, [o.agent.id])).toHaveLength(0)
      expect(yield* rows(`SELECT spent, held FROM agent_month_spend WHERE agent_id = $1`, [o.agent.id])).toEqual([
        { spent: "120", held: "0" }
      ])
    }))

  it.effect("answers over_budget when an approval for the threshold meets a budget that no longer covers it", () =>
    Effect.gen(function*() {
      const o = yield* seedApprovalOrg({ monthlyBudgetCredits: 1_000n })
      const approval = yield* ask(o.agent)
      expect(approval.reason).toBe("over_threshold")
      yield* decide(o.owner, approval.id, "approve")
      // The owner lowers the budget: the agent as its key now reads.
      const db = yield* SuiteDatabase
      const withBudget = (credits: number) =>
        Effect.promise(async () => {
          await db.query(`UPDATE agents SET monthly_budget_credits = $2 WHERE id = $1`, [o.agent.id, credits])
          return agentOf(db, o.agent.id)
        })
      expect(codeOf(yield* execute(yield* withBudget(100), { ...request, approval_id: approval.id }))).toBe(
        "over_budget"
      )
      expect(yield* rows(`SELECT 1 FROM receipts WHERE agent_id = $1`, [o.agent.id])).toHaveLength(0)
      // Nothing was used up: the approval still pays once the budget allows it.
      const restored = yield* withBudget(1_000)
      expect(codeOf(yield* execute(restored, { ...request, approval_id: approval.id }))).toBe("ok")
    }))

  it.effect("answers approval_expired for approvals older than 24 hours, to the agent and to owners", () =>
    Effect.gen(function*() {
      const o = yield* seedApprovalOrg()
      const waiting = yield* ask(o.agent)
      const approvedOld = yield* ask(o.agent, { ...request, inputs: [emailFindInput(7), ...threeInputs.slice(1)] })
      yield* decide(o.owner, approvedOld.id, "approve")
      yield* rows(
        `UPDATE purchase_approvals SET created_at = created_at - interval '25 hours', expires_at = expires_at - interval '25 hours'
         WHERE id IN ($1, $2)`,
        [waiting.id, approvedOld.id]
      )
      expect(codeOf(yield* decide(o.owner, waiting.id, "approve"))).toBe("approval_expired")
      for (const id of [waiting.id, approvedOld.id]) {
        expect(codeOf(yield* execute(o.agent, { ...request, approval_id: id }))).toBe("approval_expired")
      }
      const expired = yield* Effect.flatMap(
        Approvals,
        (approvals) => approvals.list(o.org.orgId, { status: "expired", limit: 50 })
      )
      expect(expired.approvals.map((a) => a.id).sort()).toEqual([waiting.id, approvedOld.id].sort())
      // A new request asks anew.
      const fresh = yield* ask(o.agent)
      expect(fresh.id).not.toBe(waiting.id)
    }))
})
