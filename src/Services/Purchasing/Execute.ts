import { SqlClient } from "@effect/sql"
import { Clock, Duration, Effect, Fiber, FiberSet, Option, Schema } from "effect"
import { randomUUID } from "node:crypto"
import { approvalNeeded } from "../../Domain/ApprovalRule.js"
import { amountOf } from "../../Domain/Money.js"
import { type ExecuteRequest, JobAccepted } from "../../Domain/Purchasing.js"
import { isPurchasable } from "../../Domain/Tool.js"
import {
  IdempotencyConflict,
  InvalidInput,
  LiveExecuteUnavailable,
  NotPurchasable,
  PriceAboveMax,
  ProviderError,
  RequestInProgress,
  ToolPaused,
  UnknownTool
} from "../../Errors/ApiErrors.js"
import { Approvals } from "../Approvals/Approvals.js"
import type { AuthenticatedAgent } from "../Auth/Current.js"
import { Ledger } from "../Ledger/Ledger.js"
import { Tools } from "../Tools/Tools.js"
import { ToolsRepo } from "../Tools/ToolsRepo.js"
import { directAnswer, type StoredAnswer } from "./Answers.js"
import { sha256OfCanonical } from "./Canonical.js"
import { IdempotencyRepo } from "./IdempotencyRepo.js"
import { InterruptedPurchases } from "./InterruptedPurchases.js"
import { choiceOf, fallbackChain, ItemRunner, type PurchaseContext } from "./ItemRunner.js"
import { type ItemOutcomeUpdate, type ItemRow, ItemsRepo, type NewItem } from "./ItemsRepo.js"
import { JobSignal } from "./JobSignal.js"
import { JobsRepo } from "./JobsRepo.js"
import { PurchasingConfig, purchasingRules } from "./PurchasingConfig.js"
import { ReceiptsRepo } from "./ReceiptsRepo.js"

const encodeJob = Schema.encode(JobAccepted)

/** Whole credits from the wire (number or digits). */
const creditsOf = (value: number | string | undefined): bigint | null => value === undefined ? null : BigInt(value)

const describeFields = (required: ReadonlyArray<string>, optional: ReadonlyArray<string>) =>
  [required.join(", "), optional.length > 0 ? `optional ${optional.join(", ")}` : ""].filter((s) => s.length > 0).join(
    "; "
  )

/** Each input must carry the tool's required fields (non-empty text) and nothing unknown. */
export const validateInputs = (
  inputs: ReadonlyArray<Readonly<Record<string, unknown>>>,
  fields: { readonly required: ReadonlyArray<string>; readonly optional: ReadonlyArray<string> },
  slug: string
): string | undefined => {
  const known = new Set([...fields.required, ...fields.optional])
  for (const [index, input] of inputs.entries()) {
    for (const name of fields.required) {
      const value = input[name]
      if (typeof value !== "string" || value.trim().length === 0) {
        return `inputs[${index}].${name} is required (non-empty text); ${slug} takes ${
          describeFields(fields.required, fields.optional)
        }`
      }
    }
    for (const [name, value] of Object.entries(input)) {
      if (!known.has(name)) {
        return `inputs[${index}] has an unknown field \`${name}\`; ${slug} takes ${
          describeFields(fields.required, fields.optional)
        }`
      }
      if (value !== null && typeof value === "object") {
        return `inputs[${index}].${name} must be text, a number or a boolean`
      }
    }
  }
  return undefined
}

/** An item's row after settlement, as the database now holds it. */
const rowOf = (item: NewItem, outcome: ItemOutcomeUpdate): ItemRow => ({
  id: item.id,
  receipt_id: item.receipt_id,
  idx: item.idx,
  input: item.input,
  status: outcome.status,
  hold_id: item.hold_id,
  tool_id: outcome.tool_id,
  provider: outcome.provider,
  fallback_from: outcome.fallback_from,
  cost_credits: outcome.cost_credits.toString(),
  result: outcome.result,
  result_hash: outcome.result_hash,
  check_id: outcome.check_id,
  check_version: outcome.check_version,
  reason: outcome.reason,
  error_code: outcome.error_code,
  refunded_credits: "0",
  runs: item.runs,
  claimed_by: item.claimed_by,
  claimed_until: null,
  started_at: item.started_at,
  finished_at: outcome.finished_at
})

/**
 * `POST /v1/execute`. The order of the rules:
 *
 * 1. 1 to 1,000 inputs (`invalid_input`); live agents `live_execute_unavailable` unless
 *    LIVE_EXECUTE_ENABLED.
 * 2. The idempotency key (Stripe's model): a key already answered with the same request
 *    replays that answer; with another request `idempotency_conflict`; still running
 *    `request_in_progress`. The key is taken in the transaction that writes the receipt
 *    and holds the items, so refusals before that keep nothing under the key.
 * 3. The tool (`unknown_tool`, `tool_paused`, `not_purchasable`), the inputs against its
 *    fields (`invalid_input`), the price cap (`price_above_max`).
 * 4. The approval: with `approval_id` it must match (Approvals.forPurchase); without,
 *    a purchase over the monthly budget or above the threshold answers
 *    `approval_required` (202).
 * 5. One transaction writes the receipt and its items and holds every item through the
 *    ledger (balance, budget, freeze and trial limits answer their own errors, and then
 *    nothing at all is kept).
 * 6. Up to 25 inputs run at once and answer directly; more run as a job (202 with its id).
 *
 * What is kept under an idempotency key: the 200 result, the 200 `check_failed` and the
 * 202 job. A `provider_error` (retryable; nothing charged) keeps nothing, so a retry under
 * the same key runs again.
 */
export class Execute extends Effect.Service<Execute>()("Purchasing/Execute", {
  dependencies: [
    ReceiptsRepo.Default,
    ItemsRepo.Default,
    JobsRepo.Default,
    IdempotencyRepo.Default,
    ToolsRepo.Default,
    ItemRunner.Default,
    PurchasingConfig.Default,
    Approvals.Default,
    JobSignal.Default,
    InterruptedPurchases.Default
  ],
  scoped: Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const receiptRows = yield* ReceiptsRepo
    const itemRows = yield* ItemsRepo
    const jobRows = yield* JobsRepo
    const keyRows = yield* IdempotencyRepo
    const toolRows = yield* ToolsRepo
    const items = yield* ItemRunner
    const config = yield* PurchasingConfig
    const approvals = yield* Approvals
    const signal = yield* JobSignal
    const interrupted = yield* InterruptedPurchases
    const ledger = yield* Ledger
    const tools = yield* Tools
    // Direct purchases run here, not on the request's fiber: a client that hangs up does
    // not stop a purchase half-way; it finishes and its answer is kept under its key.
    const running = yield* FiberSet.make<StoredAnswer, ProviderError>()

    const now = Effect.map(Clock.currentTimeMillis, (ms) => new Date(ms))

    // -- idempotency ----------------------------------------------------------------------

    type KeyState = { readonly _tag: "Free" } | { readonly _tag: "Replay"; readonly answer: StoredAnswer }

    /**
     * What a key says before a purchase starts: free (new, or past its retention), the
     * first answer to replay, or a refusal (another request, or one still running).
     */
    const keyState = (agentId: string, key: string, fingerprint: string) =>
      Effect.gen(function*() {
        const existing = yield* keyRows.findKey(agentId, key)
        const at = yield* now
        if (Option.isNone(existing) || existing.value.expires_at.getTime() < at.getTime()) {
          return { _tag: "Free" } as KeyState
        }
        const row = existing.value
        if (row.fingerprint !== fingerprint) {
          return yield* new IdempotencyConflict({
            message: "This idempotency_key was used with a different request; use a new key for a new purchase"
          })
        }
        if (row.status === "done" && row.response_status !== null && row.response_body !== null) {
          return { _tag: "Replay", answer: { status: row.response_status, body: row.response_body } } as KeyState
        }
        if (row.receipt_id !== null) {
          const recovered = yield* finishLapsed(agentId, key, row.receipt_id)
          if (Option.isSome(recovered)) return { _tag: "Replay", answer: recovered.value } as KeyState
          // The sweeper may have finished it meanwhile: then the key holds the answer.
          const after = yield* keyRows.findKey(agentId, key)
          if (Option.isSome(after) && after.value.response_status !== null && after.value.response_body !== null) {
            return {
              _tag: "Replay",
              answer: { status: after.value.response_status, body: after.value.response_body }
            } as KeyState
          }
        }
        return yield* new RequestInProgress({
          message: "A request with this idempotency_key is still running; retry shortly for its answer"
        })
      })

    /**
     * A key whose purchase's process died (its lease lapsed): finish that purchase now and
     * answer what the key keeps. None while the lease is live or another request finishes it.
     * Locks in the sweeper's order (the receipt, then its key), so the two never deadlock.
     */
    const finishLapsed = (agentId: string, key: string, receiptId: string) =>
      sql.withTransaction(Effect.gen(function*() {
        const receipt = yield* receiptRows.lockReceipt(receiptId)
        if (Option.isNone(receipt)) return Option.none<StoredAnswer>()
        const lapsed = yield* keyRows.lockLapsedKey(agentId, key, yield* now)
        if (Option.isNone(lapsed) || lapsed.value.receipt_id !== receiptId) return Option.none<StoredAnswer>()
        return yield* interrupted.finish(receipt.value)
      })).pipe(Effect.catchTag("SqlError", Effect.die))

    /** Runs `effect` while renewing the purchase's lease (its items' claims and its key's) every third of it. */
    const holdingLease = <A, E, R>(
      owner: string,
      key: { readonly agentId: string; readonly key: string } | null,
      effect: Effect.Effect<A, E, R>
    ) => {
      const renew = Effect.flatMap(now, (at) =>
        Effect.zipRight(
          itemRows.renewClaims(owner, new Date(at.getTime() + config.leaseMs)),
          key === null ? Effect.void : keyRows.renewLease(key, new Date(at.getTime() + config.leaseMs))
        )).pipe(
          Effect.delay(Duration.millis(Math.floor(config.leaseMs / 3))),
          Effect.forever
        )
      // Forked interruptible: a fiber forked in acquire would inherit its uninterruptibility.
      return Effect.acquireUseRelease(
        Effect.forkDaemon(Effect.interruptible(renew)),
        () => effect,
        (fiber) => Fiber.interrupt(fiber)
      )
    }

    /** Raised inside a purchase's transaction when a concurrent request took its key first. */
    class KeyTaken {
      readonly _tag = "KeyTaken"
    }

    // -- the purchase -----------------------------------------------------------------------

    const resolveTool = (ref: string) =>
      Effect.gen(function*() {
        const found = yield* toolRows.byRef(ref)
        if (Option.isNone(found)) {
          return yield* new UnknownTool({ message: `No tool with id or slug ${JSON.stringify(ref)}` })
        }
        const row = found.value
        if (row.status === "paused") {
          return yield* new ToolPaused({ message: `${row.slug} is paused; see POST /v1/recommend for alternatives` })
        }
        const price = row.price_per_success_credits === null ? null : BigInt(row.price_per_success_credits)
        if (
          price === null ||
          !isPurchasable({
            status: row.status,
            price_per_success_credits: Number(price),
            resale_rights: row.resale_rights
          })
        ) {
          return yield* new NotPurchasable({
            message: row.status === "information_only"
              ? `${row.slug} is information only and cannot be bought`
              : `${row.slug} cannot be bought (it has no price or no resale rights)`
          })
        }
        return { row, price }
      })

    const purchase = (
      agent: AuthenticatedAgent,
      request: ExecuteRequest,
      baseUrl: string,
      key: { readonly value: string; readonly fingerprint: string } | null
    ) =>
      Effect.gen(function*() {
        const { price, row } = yield* resolveTool(request.tool)
        const problem = validateInputs(request.inputs, row.input, row.slug)
        if (problem !== undefined) return yield* new InvalidInput({ message: problem })
        const count = request.inputs.length
        const amount = price * BigInt(count)
        const maxPrice = creditsOf(request.max_price)
        if (maxPrice !== null && amount > maxPrice) {
          return yield* new PriceAboveMax({
            message: `${count} input${
              count === 1 ? "" : "s"
            } x ${price} credits = ${amount} credits, above max_price ${maxPrice}`
          })
        }
        const inputsHash = sha256OfCanonical(request.inputs)
        let approvalId: string | null = null
        let budgetApproved = false
        if (request.approval_id !== undefined) {
          const approval = yield* approvals.forPurchase(agent.id, request.approval_id, {
            toolId: row.id,
            inputsHash,
            amount
          })
          approvalId = approval.id
          budgetApproved = approval.reason === "over_budget"
        } else {
          const reason = approvalNeeded({
            amount,
            spentThisMonth: yield* ledger.agentMonthSpend(agent.id),
            monthlyBudget: agent.monthly_budget_credits,
            threshold: agent.approval_threshold_credits
          })
          if (reason !== null) {
            return yield* approvals.request({
              orgId: agent.org_id,
              agentId: agent.id,
              agentName: agent.name,
              tool: { id: row.id, slug: row.slug, name: row.name },
              inputsHash,
              itemCount: count,
              amount,
              reason,
              baseUrl
            })
          }
        }

        const context: PurchaseContext = {
          receiptId: randomUUID(),
          mode: agent.mode,
          tool: choiceOf(row, price),
          fallback: request.fallback === true,
          fallbacks: request.fallback === true
            ? fallbackChain(yield* tools.scored(row.task_type), row.id, row.task_type, price)
            : []
        }
        const isJob = count > purchasingRules.directLimit
        const owner = `direct:${context.receiptId}`
        const at = yield* now
        const jobId = isJob ? randomUUID() : null
        const deadline = new Date(at.getTime() + purchasingRules.jobRunTimeMs)
        const newItems: Array<NewItem> = request.inputs.map((input, idx) => ({
          id: randomUUID(),
          receipt_id: context.receiptId,
          idx,
          input: { ...input },
          status: isJob ? "pending" : "running",
          hold_id: "",
          claimed_by: isJob ? null : owner,
          // A direct purchase's claims last one lease, renewed while it runs (holdingLease).
          claimed_until: isJob ? null : new Date(at.getTime() + config.leaseMs),
          started_at: isJob ? null : at,
          runs: isJob ? 0 : 1
        }))

        const jobBody = jobId === null ? null : JSON.stringify(
          yield* encodeJob({
            status: "queued",
            job_id: jobId,
            receipt_id: context.receiptId,
            item_count: count,
            held: amountOf(amount),
            deadline_at: deadline.toISOString()
          }).pipe(Effect.orDie)
        )

        const created = yield* sql.withTransaction(Effect.gen(function*() {
          if (key !== null) {
            // First: a concurrent request with this key waits here until this transaction
            // ends. A job's answer is kept at once; a direct purchase keeps its answer when
            // it finishes.
            const claimed = yield* keyRows.claimKey({
              agent_id: agent.id,
              key: key.value,
              fingerprint: key.fingerprint,
              status: jobBody === null ? "in_progress" : "done",
              response_status: jobBody === null ? null : 202,
              response_body: jobBody,
              receipt_id: context.receiptId,
              created_at: at,
              expires_at: new Date(at.getTime() + purchasingRules.idempotencyRetentionMs),
              lease_until: jobBody === null ? new Date(at.getTime() + config.leaseMs) : null
            })
            if (!claimed) return yield* Effect.fail(new KeyTaken())
          }
          yield* receiptRows.insertReceipt({
            id: context.receiptId,
            org_id: agent.org_id,
            agent_id: agent.id,
            mode: agent.mode,
            tool_id: row.id,
            task_type: row.task_type,
            price_credits: price.toString(),
            item_count: count,
            held_credits: amount.toString(),
            fallback: context.fallback,
            status: "running",
            job_id: jobId,
            approval_id: approvalId,
            idempotency_key: key?.value ?? null,
            created_at: at
          })
          const held: Array<NewItem> = []
          for (const item of newItems) {
            const hold = yield* ledger.hold({
              orgId: agent.org_id,
              agentId: agent.id,
              amount: price,
              purpose: "purchase_item",
              reference: item.id,
              testMode: agent.mode === "test",
              budgetApproved,
              ttlMs: isJob ? undefined : purchasingRules.directHoldTtlMs
            })
            held.push({ ...item, hold_id: hold.id })
          }
          yield* itemRows.insertItems(held)
          if (approvalId !== null) yield* approvals.consume(approvalId, context.receiptId, at)
          if (jobId === null || jobBody === null) return { _tag: "Direct" as const, held }
          yield* jobRows.insertJob({
            id: jobId,
            receipt_id: context.receiptId,
            org_id: agent.org_id,
            agent_id: agent.id,
            status: "queued",
            deadline_at: deadline,
            created_at: at
          })
          return { _tag: "Job" as const, answer: { status: 202, body: jobBody } satisfies StoredAnswer }
        })).pipe(
          Effect.catchTags({ SqlError: Effect.die, invalid_amount: Effect.die }),
          // The key went to a concurrent twin: answer as the key now says.
          Effect.catchTag("KeyTaken", () =>
            key === null
              ? Effect.dieMessage("A key was taken without a key")
              : Effect.flatMap(keyState(agent.id, key.value, key.fingerprint), (state) =>
                state._tag === "Replay"
                  ? Effect.succeed({ _tag: "Replayed" as const, answer: state.answer })
                  : Effect.fail(
                    new RequestInProgress({ message: "A request with this idempotency_key is still running" })
                  )))
        )

        if (created._tag === "Replayed") return created.answer

        if (created._tag === "Job") {
          yield* signal.notify
          return created.answer
        }
        const held = created.held

        // In the settling transaction: the receipt is finished and the answer kept under the key.
        const finish = (settled: ReadonlyMap<string, ItemOutcomeUpdate>) =>
          Effect.gen(function*() {
            const done = yield* now
            // The rows as settled, from memory; from the database if a claim was lost meanwhile.
            const finished = held.every((item) => settled.has(item.id))
              ? held.map((item) => rowOf(item, settled.get(item.id)!))
              : yield* itemRows.items(context.receiptId)
            const answer = yield* Effect.either(directAnswer(
              { receiptId: context.receiptId, mode: context.mode, tool: context.tool },
              finished
            ))
            yield* receiptRows.completeReceipt(context.receiptId, done)
            if (key !== null && answer._tag === "Right") {
              yield* keyRows.storeAnswer(agent.id, key.value, answer.right.status, answer.right.body)
            }
            if (key !== null && answer._tag === "Left") yield* keyRows.deleteKey(agent.id, key.value)
            return answer
          })
        const run = holdingLease(
          owner,
          key === null ? null : { agentId: agent.id, key: key.value },
          Effect.flatten(items.run(context, held, owner, finish))
        )
        const fiber = yield* FiberSet.run(running, run)
        return yield* Fiber.join(fiber)
      })

    /** Runs a purchase request; answers what to send (and what the key keeps). */
    const execute = (agent: AuthenticatedAgent, request: ExecuteRequest, baseUrl: string) =>
      Effect.gen(function*() {
        const count = request.inputs.length
        if (count < 1 || count > purchasingRules.maxInputs) {
          return yield* new InvalidInput({
            message: `inputs must hold 1 to ${purchasingRules.maxInputs} items (got ${count})`
          })
        }
        if (agent.mode === "live" && !config.liveExecuteEnabled) {
          return yield* new LiveExecuteUnavailable({
            message: "Live purchases are not open yet; use a test agent key (sk_test_...) to rehearse them"
          })
        }
        const key = request.idempotency_key ?? null
        if (key === null) return yield* purchase(agent, request, baseUrl, null)
        const fingerprint = sha256OfCanonical({
          tool: request.tool,
          inputs: request.inputs,
          max_price: request.max_price === undefined ? null : String(request.max_price),
          fallback: request.fallback === true
        })
        const state = yield* keyState(agent.id, key, fingerprint)
        if (state._tag === "Replay") return state.answer
        // A refusal before anything is held keeps nothing under the key.
        return yield* purchase(agent, request, baseUrl, { value: key, fingerprint })
      })

    return { execute } as const
  })
}) {}
