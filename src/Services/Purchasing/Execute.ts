import { SqlClient } from "@effect/sql"
import { Clock, Duration, Effect, Fiber, FiberSet, Option } from "effect"
import { randomUUID } from "node:crypto"
import { approvalNeeded } from "../../Domain/ApprovalRule.js"
import type { ApprovalReason } from "../../Domain/ApprovalSummary.js"
import type { AuthenticatedAgent } from "../../Domain/Current.js"
import { type AgentId, type ApprovalId, HoldId, JobId, ReceiptId, ReceiptItemId } from "../../Domain/Ids.js"
import { amountOf } from "../../Domain/Money.js"
import type { PurchaseItem } from "../../Domain/PurchaseItem.js"
import type { ExecuteRequest, ExecuteResult, JobAccepted } from "../../Domain/Purchasing.js"
import {
  type ApprovalRequired,
  type CheckFailed,
  InvalidInput,
  LiveExecuteUnavailable,
  ProviderError,
  UnknownTool
} from "../../Errors/ApiErrors.js"
import { Approvals } from "../Approvals/Approvals.js"
import { Credentials } from "../Auth/Credentials.js"
import { StaleCredential } from "../Auth/CredentialsRepo.js"
import { idempotent, type KeyTaken, refusalAsKeySays, type UsedKey } from "../Idempotency/Idempotent.js"
import { Ledger } from "../Ledger/Ledger.js"
import { Tools } from "../Tools/Tools.js"
import { type ToolRow, ToolsRepo } from "../Tools/ToolsRepo.js"
import { Refusals } from "../Usage/Refusals.js"
import { answerFromStore, directAnswer, type PurchaseAnswer, storedAnswerOf } from "./Answers.js"
import { sha256OfCanonical } from "./Canonical.js"
import { IdempotencyRepo } from "./IdempotencyRepo.js"
import { InterruptedPurchases } from "./InterruptedPurchases.js"
import { choiceOf, fallbackChain, ItemRunner, type PurchaseContext } from "./ItemRunner.js"
import { type ItemOutcomeUpdate, ItemsRepo, type NewItem } from "./ItemsRepo.js"
import { JobSignal } from "./JobSignal.js"
import { JobsRepo } from "./JobsRepo.js"
import { type PurchaseTerms, purchaseTerms } from "./PurchaseTerms.js"
import { PurchasingConfig, purchasingRules } from "./PurchasingConfig.js"
import { ReceiptsRepo } from "./ReceiptsRepo.js"

/**
 * What execute answers (the HTTP layer makes the wire answer): a direct purchase's result
 * or its `check_failed`, a job, or `approval_required` (202).
 */
export type ExecuteAnswer = ExecuteResult | JobAccepted | CheckFailed | ApprovalRequired

/** A direct purchase's answer, made once its items settled. */
type DirectAnswer = ExecuteResult | CheckFailed

/** An item's row after settlement, as the database now holds it. */
const rowOf = (item: NewItem, outcome: ItemOutcomeUpdate): PurchaseItem => ({
  id: item.id,
  receipt_id: item.receipt_id,
  idx: item.idx,
  input: item.input,
  status: outcome.status,
  hold_id: item.hold_id,
  tool_id: outcome.tool_id,
  provider: outcome.provider,
  fallback_from: outcome.fallback_from,
  cost_credits: outcome.cost_credits,
  result: outcome.result,
  result_hash: outcome.result_hash,
  check_id: outcome.check_id,
  check_version: outcome.check_version,
  reason: outcome.reason,
  error_code: outcome.error_code,
  refunded_credits: 0n,
  runs: item.runs,
  claimed_by: item.claimed_by,
  claimed_until: null,
  started_at: item.started_at,
  finished_at: outcome.finished_at
})

/**
 * Fails with StaleCredential for a credential from the cache, so the request runs again for
 * the agent as the database has it (readAgainWhenStale): called before any effect but the
 * purchase's own statement (which checks the credential itself) and before any refusal. The
 * error is made only when failing: an error captures a stack trace when made.
 */
const readFromDatabaseFirst = (agent: AuthenticatedAgent): Effect.Effect<void, StaleCredential> =>
  agent.cached === undefined ? Effect.void : Effect.failSync(() => new StaleCredential())

/**
 * `POST /v1/execute`. The order of the rules:
 *
 * 1. 1 to 1,000 inputs (`invalid_input`); live agents `live_execute_unavailable` unless
 *    LIVE_EXECUTE_ENABLED.
 * 2. The idempotency key (Stripe's model): a key already answered with the same request
 *    replays that answer; with another request `idempotency_conflict`; still running
 *    `request_in_progress`. The key is taken in the statement that writes the receipt
 *    and holds the items, so refusals before that keep nothing under the key. It is not
 *    read first: a used key is found by that statement, or, before a refusal or an
 *    approval request, by reading it then (Idempotent.ts, `lookupFirst: false`).
 * 3. The tool (`unknown_tool`, `tool_paused`, `not_purchasable`), the inputs against its
 *    fields (`invalid_input`), the price cap (`price_above_max`).
 * 4. The approval: with `approval_id` it must match (Approvals.forPurchase); without,
 *    a purchase over the monthly budget or above the threshold answers
 *    `approval_required` (202); the budget is checked by the hold itself unless the
 *    amount alone may need an approval.
 * 5. One statement holds every item through the ledger and writes the key, the receipt
 *    and its items with the holds (balance, budget, freeze and trial limits answer their
 *    own errors, and then nothing at all is kept).
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
    InterruptedPurchases.Default,
    Credentials.Default,
    Refusals.Default
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
    const credentials = yield* Credentials
    const refusals = yield* Refusals
    // Direct purchases run here, not on the request's fiber: a client that hangs up does
    // not stop a purchase half-way; it finishes and its answer is kept under its key.
    const running = yield* FiberSet.make<DirectAnswer, ProviderError>()

    const now = Effect.map(Clock.currentTimeMillis, (ms) => new Date(ms))

    // -- idempotency ----------------------------------------------------------------------

    const decodeAnswer = (stored: string) => answerFromStore(stored).pipe(Effect.orDie)

    /**
     * A key whose purchase's process died (its lease lapsed): finish that purchase now and
     * answer what the key keeps. None while the lease is live or another request finishes it.
     * Locks in the sweeper's order (the receipt, then its key), so the two never deadlock.
     */
    const finishLapsed = (agentId: AgentId, key: string, receiptId: ReceiptId) =>
      sql.withTransaction(Effect.gen(function*() {
        const receipt = yield* receiptRows.lockReceipt(receiptId)
        if (Option.isNone(receipt)) return Option.none<PurchaseAnswer>()
        const lapsed = yield* keyRows.lockLapsedKey(agentId, key, yield* now)
        if (Option.isNone(lapsed) || lapsed.value.receipt_id !== receiptId) return Option.none<PurchaseAnswer>()
        return yield* interrupted.finish(receipt.value)
      })).pipe(Effect.catchTag("SqlError", Effect.die))

    /**
     * Lets go of a key whose lease lapsed and whose receipt was never written (a purchase
     * written before its key and receipt were one transaction, cut off between the two):
     * it stands for no purchase, so the request under it runs as new. True when let go.
     */
    const releaseAbandoned = (agentId: AgentId, key: string, receiptId: ReceiptId) =>
      sql.withTransaction(Effect.gen(function*() {
        const lapsed = yield* keyRows.lockLapsedKey(agentId, key, yield* now)
        if (Option.isNone(lapsed) || lapsed.value.receipt_id !== receiptId) return false
        if (Option.isSome(yield* receiptRows.lockReceipt(receiptId))) return false
        yield* keyRows.deleteKey(agentId, key)
        return true
      })).pipe(Effect.catchTag("SqlError", Effect.die))

    /** What an agent's key holds: none when new, past its retention, or abandoned before its purchase. */
    const usedKey = (agentId: AgentId, key: string) =>
      Effect.gen(function*() {
        const found = yield* keyRows.findKey(agentId, key)
        if (Option.isNone(found) || found.value.expires_at.getTime() < (yield* now).getTime()) {
          return Option.none<UsedKey<PurchaseAnswer, never, never>>()
        }
        const row = found.value
        if (row.answer === null && (yield* releaseAbandoned(agentId, key, row.receipt_id))) {
          return Option.none<UsedKey<PurchaseAnswer, never, never>>()
        }
        const answer = Effect.gen(function*() {
          if (row.answer !== null) return Option.some(yield* decodeAnswer(row.answer))
          const recovered = yield* finishLapsed(agentId, key, row.receipt_id)
          if (Option.isSome(recovered)) return recovered
          // The sweeper may have finished it meanwhile: then the key holds the answer.
          const after = yield* keyRows.findKey(agentId, key)
          if (Option.isSome(after) && after.value.answer !== null) {
            return Option.some(yield* decodeAnswer(after.value.answer))
          }
          return Option.none<PurchaseAnswer>()
        })
        return Option.some({ fingerprint: row.fingerprint, answer })
      })

    /** Runs `effect` while renewing the purchase's lease (its items' claims and its key's) every third of it. */
    const holdingLease = <A, E, R>(
      owner: string,
      key: { readonly agentId: AgentId; readonly key: string } | null,
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

    // -- the purchase -----------------------------------------------------------------------

    const toolOf = (ref: string) =>
      Effect.flatMap(toolRows.byRef(ref), (found) =>
        Option.match(found, {
          onNone: () => new UnknownTool({ message: `No tool with id or slug ${JSON.stringify(ref)}` }),
          onSome: Effect.succeed
        }))

    /**
     * The approval this purchase runs under: the one it names (which must match), none
     * when the approval rule lets it through, or `approval_required` to answer.
     */
    const approvalFor = (
      agent: AuthenticatedAgent,
      request: ExecuteRequest,
      tool: ToolRow,
      terms: PurchaseTerms,
      inputsHash: string,
      baseUrl: string,
      checkedFirst: Effect.Effect<void, KeyTaken | StaleCredential>
    ) =>
      Effect.gen(function*() {
        if (request.approval_id !== undefined) {
          return yield* approvals.forPurchase(agent.id, request.approval_id, {
            toolId: tool.id,
            inputsHash,
            amount: terms.amount
          }).pipe(
            Effect.map((approval) => ({
              _tag: "Approved" as const,
              id: approval.id,
              budgetApproved: approval.reason === "over_budget"
            })),
            // Still waiting for an owner: answered as when it was asked for (a used key replays instead).
            Effect.catchTag(
              "approval_required",
              (answer) => Effect.as(checkedFirst, { _tag: "Required" as const, answer })
            )
          )
        }
        // The month's spend is read only when the amount alone may need an approval (to name
        // the reason that comes first); otherwise the hold checks the budget itself, and a
        // hold the budget refuses asks for the approval then (see `purchase`).
        const threshold = agent.approval_threshold_credits
        if ((threshold === null || terms.amount <= threshold) && terms.amount <= agent.monthly_budget_credits) {
          return { _tag: "Approved" as const, id: null, budgetApproved: false }
        }
        const reason = approvalNeeded({
          amount: terms.amount,
          spentThisMonth: yield* ledger.agentMonthSpend(agent.id),
          monthlyBudget: agent.monthly_budget_credits,
          threshold
        })
        if (reason === null) return { _tag: "Approved" as const, id: null, budgetApproved: false }
        // Nothing is asked for a stale credential or under a used key.
        yield* checkedFirst
        return {
          _tag: "Required" as const,
          answer: yield* askApproval(agent, tool, terms, inputsHash, baseUrl, reason)
        }
      })

    /** Asks the agent's owners to approve this purchase; answers `approval_required` (202). */
    const askApproval = (
      agent: AuthenticatedAgent,
      tool: ToolRow,
      terms: PurchaseTerms,
      inputsHash: string,
      baseUrl: string,
      reason: ApprovalReason
    ) =>
      approvals.request({
        orgId: agent.org_id,
        agentId: agent.id,
        agentName: agent.name,
        tool: { id: tool.id, slug: tool.slug, name: tool.name },
        inputsHash,
        itemCount: terms.count,
        amount: terms.amount,
        reason,
        baseUrl
      })

    /**
     * Writes a purchase in one transaction: the key is taken first (a concurrent twin is
     * turned away at once, KeyTaken), then every item is held, and the key (a direct
     * purchase keeps its answer when it finishes, a job's is kept at once), the receipt and
     * its items are written with the holds. A purchase that uses up an approval or queues a
     * job does so in the same transaction. Any refusal keeps nothing.
     */
    const writePurchase = (
      agent: AuthenticatedAgent,
      purchase: PurchaseContext,
      terms: PurchaseTerms,
      approval: { readonly id: ApprovalId | null; readonly budgetApproved: boolean },
      newItems: ReadonlyArray<NewItem>,
      job: JobAccepted | null,
      key: { readonly value: string; readonly fingerprint: string } | null,
      at: Date
    ) =>
      Effect.gen(function*() {
        const keyRow = key === null ? null : {
          agent_id: agent.id,
          key: key.value,
          fingerprint: key.fingerprint,
          status: job === null ? "in_progress" as const : "done" as const,
          answer: job === null ? null : yield* storedAnswerOf(job).pipe(Effect.orDie),
          receipt_id: purchase.receiptId,
          created_at: at,
          expires_at: new Date(at.getTime() + purchasingRules.idempotencyRetentionMs),
          lease_until: job === null ? new Date(at.getTime() + config.leaseMs) : null
        }
        const receipt = {
          id: purchase.receiptId,
          org_id: agent.org_id,
          agent_id: agent.id,
          mode: agent.mode,
          tool_id: purchase.tool.id,
          task_type: purchase.tool.task_type,
          price_credits: terms.price,
          item_count: terms.count,
          held_credits: terms.amount,
          fallback: purchase.fallback,
          status: "running" as const,
          job_id: job?.job_id ?? null,
          approval_id: approval.id,
          idempotency_key: key?.value ?? null,
          created_at: at
        }
        // One transaction: the credential checked again when it came from the cache, the key
        // taken, every item's hold (all of them or none), the receipt and its items, and the
        // approval used up or the job queued. Any refusal keeps nothing.
        return yield* sql.withTransaction(Effect.gen(function*() {
          const [valid] = yield* credentials.stillValid([agent])
          if (valid === false) return yield* new StaleCredential()
          if (keyRow !== null) yield* keyRows.claim(keyRow)
          yield* ledger.holdMany(
            {
              orgId: agent.org_id,
              agentId: agent.id,
              amount: terms.price,
              purpose: "purchase_item",
              testMode: agent.mode === "test",
              budgetApproved: approval.budgetApproved,
              ttlMs: job === null ? purchasingRules.directHoldTtlMs : undefined
            },
            newItems.map((item) => item.id),
            newItems.map((item) => item.hold_id!)
          )
          yield* receiptRows.insertReceipt(receipt)
          yield* itemRows.insertItems(newItems)
          if (approval.id !== null) yield* approvals.consume(approval.id, purchase.receiptId, at)
          if (job !== null) {
            yield* jobRows.insertJob({
              id: job.job_id,
              receipt_id: purchase.receiptId,
              org_id: agent.org_id,
              agent_id: agent.id,
              status: "queued",
              deadline_at: new Date(job.deadline_at),
              created_at: at
            })
          }
        }))
      }).pipe(Effect.asVoid, Effect.catchTags({ SqlError: Effect.die, invalid_amount: Effect.die }))

    /**
     * Runs a direct purchase's held items (up to 25 at once) under its lease; in the
     * settling transaction the receipt is finished and the answer kept under the key.
     */
    const runDirect = (
      agent: AuthenticatedAgent,
      purchase: PurchaseContext,
      held: ReadonlyArray<NewItem>,
      owner: string,
      key: string | null
    ) => {
      const finish = (settled: ReadonlyMap<string, ItemOutcomeUpdate>) =>
        Effect.gen(function*() {
          const done = yield* now
          // The rows as settled, from memory; when a claim was lost meanwhile, the items
          // another runner settled as the database holds them (this settlement's outcomes
          // are recorded in the same transaction).
          const finished = held.every((item) => settled.has(item.id))
            ? held.map((item) => rowOf(item, settled.get(item.id)!))
            : (yield* itemRows.items(purchase.receiptId)).map((row) => {
              const outcome = settled.get(row.id)
              return outcome === undefined ? row : { ...row, ...outcome, claimed_until: null }
            })
          const answer = yield* Effect.either(directAnswer(purchase, finished))
          // The items' outcomes, the receipt finished and, under a key, the answer kept in the
          // settling transaction; a provider_error keeps nothing, so a retry under the same key
          // runs again.
          const stored = key !== null && answer._tag === "Right"
            ? yield* storedAnswerOf(answer.right).pipe(Effect.orDie)
            : null
          const writes = Effect.zipRight(
            receiptRows.completeReceipt(purchase.receiptId, done),
            key === null
              ? Effect.void
              : stored === null
              ? keyRows.deleteKey(agent.id, key)
              : keyRows.storeAnswer(agent.id, key, stored)
          )
          return { value: answer, writes }
        })
      return holdingLease(
        owner,
        key === null ? null : { agentId: agent.id, key },
        Effect.flatten(items.run(purchase, held, owner, finish))
      )
    }

    const purchase = (
      agent: AuthenticatedAgent,
      request: ExecuteRequest,
      baseUrl: string,
      key: { readonly value: string; readonly fingerprint: string } | null,
      keyFree: Effect.Effect<void, KeyTaken>
    ) =>
      Effect.gen(function*() {
        // Before any effect but the purchase's own statement (which checks both itself), and
        // before a refusal: a cached credential is read again, and a used key answers as it says.
        const checkedFirst = Effect.zipRight(readFromDatabaseFirst(agent), keyFree)
        const { approval, inputsHash, terms, tool } = yield* Effect.gen(function*() {
          const tool = yield* toolOf(request.tool)
          const lockedPrice = request.approval_id === undefined
            ? null
            : yield* approvals.lockedPrice(agent.id, request.approval_id, tool.id)
          const terms = yield* purchaseTerms(tool, request, { now: yield* now, lockedPrice })
          const inputsHash = sha256OfCanonical(request.inputs)
          const approval = yield* approvalFor(agent, request, tool, terms, inputsHash, baseUrl, checkedFirst)
          return { approval, inputsHash, terms, tool }
        }).pipe(refusalAsKeySays(checkedFirst))
        if (approval._tag === "Required") return approval.answer as ExecuteAnswer

        const context: PurchaseContext = {
          receiptId: ReceiptId.make(randomUUID()),
          orgId: agent.org_id,
          mode: agent.mode,
          tool: choiceOf(tool, terms.price),
          fallback: request.fallback === true,
          fallbacks: request.fallback === true
            ? fallbackChain(yield* tools.scored(tool.task_type), tool.id, tool.task_type, terms.price)
            : []
        }
        const isJob = terms.count > purchasingRules.directLimit
        const owner = `direct:${context.receiptId}`
        const at = yield* now
        const job: JobAccepted | null = isJob
          ? {
            status: "queued",
            job_id: JobId.make(randomUUID()),
            receipt_id: context.receiptId,
            item_count: terms.count,
            held: amountOf(terms.amount),
            deadline_at: new Date(at.getTime() + purchasingRules.jobRunTimeMs).toISOString()
          }
          : null
        const newItems: Array<NewItem> = request.inputs.map((input, idx) => ({
          id: ReceiptItemId.make(randomUUID()),
          hold_id: HoldId.make(randomUUID()),
          receipt_id: context.receiptId,
          idx,
          input: { ...input },
          status: isJob ? "pending" : "running",
          claimed_by: isJob ? null : owner,
          // A direct purchase's claims last one lease, renewed while it runs (holdingLease).
          claimed_until: isJob ? null : new Date(at.getTime() + config.leaseMs),
          started_at: isJob ? null : at,
          runs: isJob ? 0 : 1
        }))

        // Past the monthly budget without an approval: the owners are asked for one (the
        // approval rule comes before the ledger's, so a frozen org's purchase past the budget
        // asks too).
        const askForBudget = askApproval(agent, tool, terms, inputsHash, baseUrl, "over_budget")
        const refused = yield* writePurchase(agent, context, terms, approval, newItems, job, key, at).pipe(
          Effect.as(null),
          Effect.catchTags({
            over_budget: (overBudget) => approval.id === null ? askForBudget : Effect.fail(overBudget),
            credits_frozen: (frozen) =>
              approval.id === null
                ? Effect.flatMap(
                  ledger.agentMonthSpend(agent.id),
                  (spent) => spent + terms.amount > agent.monthly_budget_credits ? askForBudget : Effect.fail(frozen)
                )
                : Effect.fail(frozen)
          })
        )
        if (refused !== null) return refused as ExecuteAnswer
        if (job !== null) {
          yield* signal.notify
          return job
        }
        const fiber = yield* FiberSet.run(running, runDirect(agent, context, newItems, owner, key?.value ?? null))
        return yield* Fiber.join(fiber)
      })

    /** Runs a purchase request; answers what to send (and what the key keeps). */
    const executeFor = (agent: AuthenticatedAgent, request: ExecuteRequest, baseUrl: string) =>
      Effect.gen(function*() {
        const refuse = <E>(error: () => E) => Effect.zipRight(readFromDatabaseFirst(agent), Effect.failSync(error))
        const count = request.inputs.length
        if (count < 1 || count > purchasingRules.maxInputs) {
          return yield* refuse(() =>
            new InvalidInput({ message: `inputs must hold 1 to ${purchasingRules.maxInputs} items (got ${count})` })
          )
        }
        if (agent.mode === "live" && !config.liveExecuteEnabled) {
          return yield* refuse(() =>
            new LiveExecuteUnavailable({
              message: "Live purchases are not open yet; use a test agent key (sk_test_...) to rehearse them"
            })
          )
        }
        const fingerprint = sha256OfCanonical({
          tool: request.tool,
          inputs: request.inputs,
          max_price: request.max_price === undefined ? null : String(request.max_price),
          fallback: request.fallback === true
        })
        const answer = yield* idempotent({
          key: request.idempotency_key ?? null,
          fingerprint,
          noun: "purchase",
          lookup: (key) => usedKey(agent.id, key),
          lookupFirst: false,
          run: (key, keyFree) =>
            purchase(agent, request, baseUrl, key === null ? null : { value: key, fingerprint }, keyFree)
        })
        // A kept provider_error (a purchase the sweeper finished) replays as the failure it was.
        if (answer instanceof ProviderError) return yield* answer
        return answer
      })

    /**
     * Runs a purchase request for `agent`; a cached credential found changed before anything
     * was written is read again and the request run for the agent as it is now
     * (Credentials.readAgainWhenStale).
     */
    const execute = (agent: AuthenticatedAgent, request: ExecuteRequest, baseUrl: string) =>
      credentials.readAgainWhenStale(agent, (current) => executeFor(current, request, baseUrl)).pipe(
        Effect.tapError(refusals.record(agent))
      )

    return { execute } as const
  })
}) {}
