import { Clock, Effect, Option } from "effect"
import type { Receipt } from "../../Domain/Receipt.js"
import { Tools } from "../Tools/Tools.js"
import { directAnswer, type PurchaseAnswer, storedAnswerOf } from "./Answers.js"
import { IdempotencyRepo } from "./IdempotencyRepo.js"
import { choiceOf, fallbackChain, ItemRunner, type PurchaseContext } from "./ItemRunner.js"
import { ItemsRepo } from "./ItemsRepo.js"
import { ReceiptsRepo } from "./ReceiptsRepo.js"

/**
 * Direct purchases whose process died mid-way, finished by whoever finds them first: the
 * sweeper, or the next request under the purchase's idempotency key once its lease lapsed.
 * Items whose claim lapsed are released and marked failed (`interrupted`), never run
 * again (a provider may already have been called for them), and the answer is kept under
 * the key, `provider_error` included, so a retry replays this receipt and never buys
 * twice. Also the purchase context of a stored receipt, which jobs resume with.
 */
export class InterruptedPurchases extends Effect.Service<InterruptedPurchases>()("Purchasing/InterruptedPurchases", {
  dependencies: [ReceiptsRepo.Default, ItemsRepo.Default, IdempotencyRepo.Default, ItemRunner.Default],
  effect: Effect.gen(function*() {
    const receiptRows = yield* ReceiptsRepo
    const itemRows = yield* ItemsRepo
    const keyRows = yield* IdempotencyRepo
    const items = yield* ItemRunner
    const tools = yield* Tools

    /** The purchase as its items run now: the receipt's tool at its held price, and its fallbacks. */
    const contextOf = (receipt: Receipt) =>
      Effect.gen(function*() {
        const ranked = yield* tools.scored()
        const scored = ranked.find((s) => s.tool.row.id === receipt.tool_id)
        if (scored === undefined) {
          return yield* Effect.dieMessage(`Tool ${receipt.tool_id} of receipt ${receipt.id} is gone`)
        }
        const price = receipt.price_credits
        return {
          receiptId: receipt.id,
          orgId: receipt.org_id,
          mode: receipt.mode,
          tool: choiceOf(scored.tool.row, price),
          fallback: receipt.fallback,
          fallbacks: receipt.fallback ? fallbackChain(ranked, receipt.tool_id, receipt.task_type, price) : []
        } satisfies PurchaseContext
      })

    /**
     * Finishes an interrupted receipt (inside the caller's transaction, the receipt locked);
     * answers what its key now keeps. A receipt with an item still claimed by a live
     * process is left alone.
     */
    const finish = (receipt: Receipt) =>
      Effect.gen(function*() {
        const at = new Date(yield* Clock.currentTimeMillis)
        if (yield* itemRows.hasLiveItems(receipt.id, at)) return Option.none<PurchaseAnswer>()
        for (const item of yield* itemRows.lapsedDirectItems(receipt.id, at)) {
          yield* items.abandon(item, {
            status: "failed",
            tool_id: null,
            provider: null,
            fallback_from: null,
            cost_credits: 0n,
            result: null,
            result_hash: null,
            check_id: null,
            check_version: null,
            reason: "The purchase was interrupted before this item finished; its hold was released",
            error_code: "interrupted"
          })
        }
        yield* receiptRows.completeReceipt(receipt.id, at)
        if (receipt.idempotency_key === null) return Option.none<PurchaseAnswer>()
        const context = yield* contextOf(receipt)
        // A provider_error is kept too: a retry replays this receipt and never buys twice.
        const answer: PurchaseAnswer = yield* directAnswer(context, yield* itemRows.items(receipt.id)).pipe(
          Effect.catchTag("provider_error", Effect.succeed)
        )
        yield* keyRows.storeAnswer(
          receipt.agent_id,
          receipt.idempotency_key,
          yield* storedAnswerOf(answer).pipe(Effect.orDie)
        )
        return Option.some(answer)
      })

    return { contextOf, finish } as const
  })
}) {}
