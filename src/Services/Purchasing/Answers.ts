import { Effect, Schema } from "effect"
import type { ReceiptId } from "../../Domain/Ids.js"
import { amountOf } from "../../Domain/Money.js"
import type { PurchaseItem } from "../../Domain/PurchaseItem.js"
import { ExecuteResult, JobAccepted, type ToolRef } from "../../Domain/Purchasing.js"
import { CheckFailed, ProviderError } from "../../Errors/ApiErrors.js"
import { resultItemView } from "./Receipts.js"

/**
 * What a purchase answers, as typed values; the HTTP layer makes the wire answer from them
 * (the execute endpoint declares each as a success or error variant with its status):
 * - a direct purchase with at least one item charged (passed or partial): `ExecuteResult`;
 * - nothing charged and every item failed its check: `CheckFailed` (a 200 answer);
 * - a job: `JobAccepted` (202);
 * - nothing charged and some item failed at the provider (or was interrupted):
 *   `ProviderError`, a failure (retryable; kept under the idempotency key only when the
 *   sweeper finished the purchase, so a retry never buys twice).
 * The same function serves the request and the sweeper that finishes a purchase whose
 * replica died.
 */
export const PurchaseAnswer = Schema.Union(ExecuteResult, JobAccepted, CheckFailed, ProviderError)
export type PurchaseAnswer = typeof PurchaseAnswer.Type

/**
 * An answer as its idempotency key keeps it: the schema's JSON, so every replay decodes
 * to the same value and is encoded to the same bytes as the first answer.
 */
export const StoredAnswer = Schema.parseJson(PurchaseAnswer)
export const storedAnswerOf = Schema.encode(StoredAnswer)
export const answerFromStore = Schema.decode(StoredAnswer)

export interface AnswerContext {
  readonly receiptId: ReceiptId
  readonly mode: "test" | "live"
  readonly tool: ToolRef & { readonly check_id: string; readonly check_version: string }
}

export const directAnswer = (
  context: AnswerContext,
  rows: ReadonlyArray<PurchaseItem>
): Effect.Effect<ExecuteResult | CheckFailed, ProviderError> =>
  Effect.gen(function*() {
    const charged = rows.filter((row) => row.status === "passed" || row.status === "partial")
    if (charged.length === 0) {
      const providerFailed = rows.filter((row) => row.error_code !== "check_failed")
      if (providerFailed.length > 0) {
        return yield* new ProviderError({
          message: rows.length === 1
            ? `${rows[0]!.reason ?? "The provider failed"}; nothing was charged`
            : `${providerFailed.length} of ${rows.length} items failed at the provider (${
              providerFailed[0]!.reason ?? "provider failed"
            }) and no item passed; nothing was charged`
        })
      }
      const reasons = rows.map((row) => ({ index: row.idx, reason: row.reason ?? "The result failed the check" }))
      const reason = rows.length === 1
        ? reasons[0]!.reason
        : `All ${rows.length} results failed the check (first: ${reasons[0]!.reason})`
      const first = rows[0]
      const check = {
        id: first?.check_id ?? context.tool.check_id,
        version: first?.check_version ?? context.tool.check_version
      }
      return new CheckFailed({
        message: `The result failed the published check ${check.id} ${check.version}; nothing was charged`,
        reason,
        receipt_id: context.receiptId,
        check,
        items: reasons
      })
    }
    const count = (status: PurchaseItem["status"]) => rows.filter((row) => row.status === status).length
    return {
      status: "done",
      receipt_id: context.receiptId,
      mode: context.mode,
      tool: { id: context.tool.id, slug: context.tool.slug, name: context.tool.name, provider: context.tool.provider },
      item_count: rows.length,
      charged: amountOf(charged.reduce((sum, row) => sum + row.cost_credits, 0n)),
      counts: {
        passed: count("passed"),
        partial: count("partial"),
        failed: count("failed"),
        expired: count("expired"),
        pending: count("pending") + count("running")
      },
      fallback_used: rows.some((row) => row.fallback_from !== null),
      items: rows.map(resultItemView)
    } satisfies ExecuteResult
  })
