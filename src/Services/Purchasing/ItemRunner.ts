import { SqlClient } from "@effect/sql"
import { Clock, Effect, Either } from "effect"
import type { OrgId, ReceiptId } from "../../Domain/Ids.js"
import type { PurchaseItem } from "../../Domain/PurchaseItem.js"
import type { TaskTypeId } from "../../Domain/TaskType.js"
import { Ledger } from "../Ledger/Ledger.js"
import type { ScoredTool } from "../Tools/Tools.js"
import type { ToolRow } from "../Tools/ToolsRepo.js"
import { sha256OfCanonical } from "./Canonical.js"
import { type ItemInput, runCheck } from "./Checks.js"
import { type ItemOutcomeUpdate, ItemsRepo } from "./ItemsRepo.js"
import { type RunnableTool, type ToolAnswer, ToolRunner } from "./ToolRunner.js"

/**
 * Items of a purchase from start to settlement: run the tool (and, when the provider fails
 * and `fallback` was asked for, the next-best tools), verify the result with the published
 * check of the tool that answered, then capture the item's own hold (passed or partial) or
 * release it (failed) and record the outcome. A batch (up to 25 items, run concurrently)
 * settles in one transaction, which first re-checks that this runner still holds each
 * item's claim, so an item is settled exactly once even if a lapsed claim was taken over; a
 * single item settles in one statement that checks its claim the same way first.
 */
export interface ToolChoice extends RunnableTool {
  readonly name: string
  readonly check_version: string
  /** What a success of this tool costs in this purchase. */
  readonly price: bigint
}

/** What running an item needs of its row. */
export type RunnableItem = Pick<PurchaseItem, "id" | "input" | "hold_id">

export interface PurchaseContext {
  readonly receiptId: ReceiptId
  /** The buyer's org: its providers' daily limits count the purchase's live calls (none: a keyless x402 payer). */
  readonly orgId: OrgId | null
  readonly mode: "test" | "live"
  readonly tool: ToolChoice
  readonly fallback: boolean
  /** Tools to try, in order, when the provider of `tool` fails (empty without fallback). */
  readonly fallbacks: ReadonlyArray<ToolChoice>
}

export const choiceOf = (row: ToolRow, price: bigint): ToolChoice => ({
  id: row.id,
  slug: row.slug,
  name: row.name,
  provider: row.provider,
  task_type: row.task_type,
  check_id: row.check_id,
  check_version: row.check_version,
  gateway_endpoint: row.gateway_endpoint,
  price
})

/**
 * The fallback order for a tool: the other purchasable tools of its task type in rank
 * order, keeping only those whose price per success is at most the price held for the
 * item, so a fallback never costs more than what was priced, capped and approved.
 */
export const fallbackChain = (
  ranked: ReadonlyArray<ScoredTool>,
  toolId: string,
  taskType: TaskTypeId,
  heldPrice: bigint
): ReadonlyArray<ToolChoice> =>
  ranked
    .filter((s) =>
      s.tool.row.task_type === taskType && s.tool.row.id !== toolId && s.tool.purchasable && s.tool.price !== null &&
      s.tool.price <= heldPrice
    )
    .sort((a, b) => a.rank - b.rank)
    .map((s) => choiceOf(s.tool.row, s.tool.price!))

/**
 * What the caller of a settlement answers (`value`), and its own writes (`writes`), made in
 * the transaction that settles the items and records their outcomes.
 */
export interface SettlementFinish<A> {
  readonly value: A
  readonly writes: Effect.Effect<void>
}

export class ItemRunner extends Effect.Service<ItemRunner>()("Purchasing/ItemRunner", {
  dependencies: [ItemsRepo.Default, ToolRunner.Default],
  effect: Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const itemRows = yield* ItemsRepo
    const runner = yield* ToolRunner
    const ledger = yield* Ledger

    /** What the tool (or a fallback) answered, and which tool that was. */
    const obtain = (context: PurchaseContext, input: ItemInput) =>
      Effect.gen(function*() {
        const failures: Array<string> = []
        for (const choice of [context.tool, ...(context.fallback ? context.fallbacks : [])]) {
          const answer: ToolAnswer = yield* runner.run(choice, input, context.mode, context.orgId)
          if (answer._tag !== "ProviderFailure") return { answer, used: choice, failures }
          failures.push(`${choice.slug}: ${answer.reason}`)
        }
        return {
          answer: { _tag: "ProviderFailure", reason: failures.join("; ") } as ToolAnswer,
          used: context.tool,
          failures
        }
      })

    const outcomeOf = (context: PurchaseContext, input: ItemInput) =>
      Effect.gen(function*() {
        const { answer, used } = yield* obtain(context, input)
        const base = {
          tool_id: used.id,
          provider: used.provider,
          fallback_from: used.id === context.tool.id ? null : context.tool.id,
          check_id: used.check_id,
          check_version: used.check_version,
          finished_at: new Date(0)
        }
        // Nothing charged, nothing kept.
        const failed = { ...base, status: "failed", cost_credits: 0n, result: null, result_hash: null } as const
        switch (answer._tag) {
          case "ProviderFailure":
            return {
              ...failed,
              check_id: null,
              check_version: null,
              reason: `The provider failed after one retry: ${answer.reason}`,
              error_code: "provider_error"
            } satisfies ItemOutcomeUpdate
          case "Refused":
            return {
              ...failed,
              reason: `${used.provider} found no result (HTTP ${answer.status})`,
              error_code: "check_failed"
            } satisfies ItemOutcomeUpdate
          case "Answer": {
            const verdict = yield* Effect.try(() => runCheck(used.check_id, used.check_version, input, answer.result))
              .pipe(Effect.orDie)
            const charged = verdict.outcome !== "failed"
            return {
              ...base,
              status: verdict.outcome,
              cost_credits: charged ? used.price : 0n,
              result: charged ? answer.result : null,
              result_hash: sha256OfCanonical(answer.result),
              reason: verdict.reason,
              error_code: charged ? null : "check_failed"
            } satisfies ItemOutcomeUpdate
          }
        }
      })

    /**
     * An item's final outcome once its hold's settlement was tried: a charge whose hold the
     * ledger's sweeper released first (it outlived its time) charges nothing.
     */
    const finalOutcome = (outcome: ItemOutcomeUpdate, settled: boolean): ItemOutcomeUpdate =>
      settled || outcome.cost_credits === 0n ? outcome : {
        ...outcome,
        status: "failed",
        cost_credits: 0n,
        result: null,
        reason: "The item's hold was released before its result could be charged",
        error_code: "hold_expired"
      }

    /**
     * Settles items in one transaction: the claims `owner` still holds are locked first (a
     * lapsed claim taken over by another runner is left to it), those items' holds captured
     * or released in one statement (Ledger.settleTogether, with the events it causes) and
     * their outcomes recorded; `andThen` sees the settled outcomes and its writes go in the
     * same transaction (a direct purchase finishes its receipt and keeps its answer).
     */
    const settle = <A>(
      owner: string,
      entries: ReadonlyArray<{ readonly item: RunnableItem; readonly outcome: ItemOutcomeUpdate }>,
      andThen: (settled: ReadonlyMap<string, ItemOutcomeUpdate>) => Effect.Effect<SettlementFinish<A>>
    ) =>
      sql.withTransaction(Effect.gen(function*() {
        const claimed = yield* itemRows.lockClaimedItems(entries.map((entry) => entry.item.id), owner)
        const held = entries.flatMap(({ item, outcome }) =>
          claimed.has(item.id) && item.hold_id !== null ? [{ id: item.id, holdId: item.hold_id, outcome }] : []
        )
        const answers = yield* ledger.settleTogether(
          held.map(({ holdId, outcome }) => ({ holdId, captured: outcome.cost_credits }))
        )
        const settled = held.map(({ id, outcome }, i) => {
          const answer = answers[i]!
          // Settled before (the sweeper released it first): fine. Anything else is a defect.
          if (Either.isLeft(answer) && answer.left._tag !== "already_settled") {
            return { id, outcome, defect: answer.left }
          }
          return { id, outcome: finalOutcome(outcome, Either.isRight(answer)), defect: undefined }
        })
        const defect = settled.find((entry) => entry.defect !== undefined)
        if (defect !== undefined) return yield* Effect.die(defect.defect)
        const finished = yield* andThen(new Map(settled.map(({ id, outcome }) => [id, outcome])))
        yield* itemRows.recordOutcomes(settled)
        yield* finished.writes
        return finished.value
      })).pipe(Effect.catchTag("SqlError", Effect.die), Effect.uninterruptible)

    /**
     * Runs claimed items: the tools concurrently (one try and a retry each, fallbacks when
     * asked), then the settlement of all of them in one transaction (one statement for a
     * single item), which also makes `andThen`'s writes, given the settled outcomes (a
     * direct purchase finishes its receipt and keeps its answer there).
     */
    const run = <A>(
      context: PurchaseContext,
      batch: ReadonlyArray<RunnableItem>,
      owner: string,
      andThen: (settled: ReadonlyMap<string, ItemOutcomeUpdate>) => Effect.Effect<SettlementFinish<A>>
    ) =>
      Effect.gen(function*() {
        const outcomes = yield* Effect.forEach(batch, (item) =>
          Effect.map(outcomeOf(context, item.input), (outcome) => ({ item, outcome })), { concurrency: "unbounded" })
        const now = new Date(yield* Clock.currentTimeMillis)
        return yield* settle(
          owner,
          outcomes.map(({ item, outcome }) => ({ item, outcome: { ...outcome, finished_at: now } })),
          andThen
        )
      })

    /** Releases the hold of an item that will not run and records why (expired, interrupted). */
    const abandon = (item: Pick<PurchaseItem, "id" | "hold_id">, outcome: Omit<ItemOutcomeUpdate, "finished_at">) =>
      Effect.gen(function*() {
        const now = new Date(yield* Clock.currentTimeMillis)
        if (item.hold_id !== null) {
          yield* ledger.release(item.hold_id).pipe(
            Effect.catchTags({ already_settled: () => Effect.void, not_a_hold: Effect.die })
          )
        }
        yield* itemRows.recordOutcome(item.id, { ...outcome, finished_at: now })
      })

    return { run, abandon, outcomeOf } as const
  })
}) {}
