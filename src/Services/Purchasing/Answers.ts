import { Effect, Schema } from "effect"
import { amountOf } from "../../Domain/Money.js"
import { ExecuteResult, type ToolRef } from "../../Domain/Purchasing.js"
import { CheckFailed, ProviderError } from "../../Errors/ApiErrors.js"
import { encodeApiError } from "../../Errors/Wire.js"
import type { ItemRow } from "./ItemsRepo.js"
import { resultItemView } from "./Receipts.js"

/**
 * The answer of a finished direct purchase, built from its item rows (the same function
 * serves the request and the sweeper that finishes a purchase whose replica died):
 * - at least one item charged (passed or partial): 200 with every item's outcome;
 * - nothing charged and every item failed its check: 200 `check_failed` with the reasons;
 * - nothing charged and some item failed at the provider (or was interrupted): 502
 *   `provider_error`, a failure (retryable; nothing kept under the idempotency key).
 */
export interface StoredAnswer {
  readonly status: number
  /** The JSON body, serialised once: the first answer and every replay are the same bytes. */
  readonly body: string
}

export interface AnswerContext {
  readonly receiptId: string
  readonly mode: "test" | "live"
  readonly tool: ToolRef & { readonly check_id: string; readonly check_version: string }
}

const encodeResult = Schema.encode(ExecuteResult)

export const directAnswer = (context: AnswerContext, rows: ReadonlyArray<ItemRow>) =>
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
      const encoded = yield* encodeApiError(
        new CheckFailed({
          message: `The result failed the published check ${check.id} ${check.version}; nothing was charged`,
          reason,
          receipt_id: context.receiptId,
          check,
          items: reasons
        })
      )
      return { status: encoded.status, body: JSON.stringify(encoded.body) } satisfies StoredAnswer
    }
    const count = (status: ItemRow["status"]) => rows.filter((row) => row.status === status).length
    const body = yield* encodeResult({
      status: "done",
      receipt_id: context.receiptId,
      mode: context.mode,
      tool: { id: context.tool.id, slug: context.tool.slug, name: context.tool.name, provider: context.tool.provider },
      item_count: rows.length,
      charged: amountOf(charged.reduce((sum, row) => sum + BigInt(row.cost_credits), 0n)),
      counts: {
        passed: count("passed"),
        partial: count("partial"),
        failed: count("failed"),
        expired: count("expired"),
        pending: count("pending") + count("running")
      },
      fallback_used: rows.some((row) => row.fallback_from !== null),
      items: rows.map(resultItemView)
    }).pipe(Effect.orDie)
    return { status: 200, body: JSON.stringify(body) } satisfies StoredAnswer
  })
