import { Effect, Option } from "effect"
import type { ReceiptId } from "../../Domain/Ids.js"
import { amountOf } from "../../Domain/Money.js"
import type {
  ItemCounts,
  Receipt,
  ReceiptItem,
  ReceiptItemDetail,
  ReceiptSummary,
  ResultItem
} from "../../Domain/Purchasing.js"
import { isoOrNull } from "../../Domain/Timestamps.js"
import { NotFound } from "../../Errors/ApiErrors.js"
import { RecordSigner } from "../Receipts/RecordSigner.js"
import { sha256OfCanonical } from "./Canonical.js"
import { type ItemRow, ItemsRepo } from "./ItemsRepo.js"
import { ReceiptsRepo, type ReceiptTotalsRow } from "./ReceiptsRepo.js"

/**
 * Receipts: one per purchase, written when it starts, with one item per input (provider,
 * cost, result hash, check version, outcome, refund). The org's agents, members and org
 * keys read them, signed. The inputs and kept results are a list of their own for the org's
 * members and org keys (`items`), unsigned: the signed record carries their hashes, and a
 * result is forgotten after 30 days while the receipt stays.
 */
const CHARGED = new Set(["passed", "partial"])

export const itemView = (row: ItemRow): ReceiptItem => ({
  index: row.idx,
  outcome: row.status,
  charged: CHARGED.has(row.status),
  reason: row.reason,
  error_code: row.error_code,
  tool_id: row.tool_id,
  provider: row.provider,
  fallback_from_tool_id: row.fallback_from,
  cost: amountOf(row.cost_credits),
  refund: amountOf(row.refunded_credits),
  input_hash: sha256OfCanonical(row.input),
  result_hash: row.result_hash,
  check: row.check_id === null || row.check_version === null ? null : { id: row.check_id, version: row.check_version },
  finished_at: isoOrNull(row.finished_at)
})

export const resultItemView = (row: ItemRow): ResultItem => ({
  ...itemView(row),
  result: CHARGED.has(row.status) ? (row.result ?? null) : null
})

export const detailItemView = (row: ItemRow): ReceiptItemDetail => ({ ...resultItemView(row), input: row.input })

export const countsOf = (
  row: Pick<ReceiptTotalsRow, "passed" | "partial" | "failed" | "expired" | "pending">
): ItemCounts => ({
  passed: row.passed,
  partial: row.partial,
  failed: row.failed,
  expired: row.expired,
  pending: row.pending
})

export const summaryView = (row: ReceiptTotalsRow): ReceiptSummary => ({
  id: row.id,
  org_id: row.org_id,
  agent_id: row.agent_id,
  mode: row.mode,
  tool: { id: row.tool_id, slug: row.tool_slug, name: row.tool_name, provider: row.tool_provider },
  task_type: row.task_type,
  status: row.status,
  item_count: row.item_count,
  price_per_item: amountOf(row.price_credits),
  charged: amountOf(row.charged_credits),
  refunded: amountOf(row.refunded_credits),
  counts: countsOf(row),
  fallback_requested: row.fallback,
  fallback_used: row.fallback_used,
  job_id: row.job_id,
  approval_id: row.approval_id,
  idempotency_key: row.idempotency_key,
  created_at: row.created_at.toISOString(),
  completed_at: isoOrNull(row.completed_at)
})

export class Receipts extends Effect.Service<Receipts>()("Purchasing/Receipts", {
  dependencies: [ReceiptsRepo.Default, ItemsRepo.Default, RecordSigner.Default],
  effect: Effect.gen(function*() {
    const receiptRows = yield* ReceiptsRepo
    const itemRows = yield* ItemsRepo
    const signer = yield* RecordSigner

    const notFound = new NotFound({ message: "No receipt with that id in this org" })

    const totals = (orgId: string, id: ReceiptId) =>
      Effect.flatMap(
        receiptRows.receiptWithTotals(orgId, id),
        Option.match({ onNone: () => Effect.fail(notFound), onSome: Effect.succeed })
      )

    const get = (orgId: string, id: ReceiptId) =>
      Effect.gen(function*() {
        const row = yield* totals(orgId, id)
        const items = yield* itemRows.items(row.id)
        const receipt = yield* signer.signed({ ...summaryView(row), items: items.map(itemView) })
        return receipt satisfies Receipt
      })

    const list = (orgId: string, options: { readonly limit: number; readonly startingAfter?: ReceiptId | undefined }) =>
      Effect.gen(function*() {
        let after = Option.none<{ readonly created_at: Date; readonly id: ReceiptId }>()
        if (options.startingAfter !== undefined) {
          after = yield* receiptRows.receiptCursor(orgId, options.startingAfter)
          if (Option.isNone(after)) {
            return yield* new NotFound({ message: "starting_after names no receipt of this org" })
          }
        }
        const rows = yield* receiptRows.listReceipts(orgId, options.limit + 1, after)
        return { receipts: rows.slice(0, options.limit).map(summaryView), has_more: rows.length > options.limit }
      })

    /** A receipt's items with their inputs and kept results, by index, a page at a time. */
    const items = (
      orgId: string,
      id: ReceiptId,
      options: { readonly limit: number; readonly startingAfter?: string | undefined }
    ) =>
      Effect.gen(function*() {
        const receipt = yield* receiptRows.receiptCursor(orgId, id)
        if (Option.isNone(receipt)) return yield* notFound
        let afterIndex = -1
        if (options.startingAfter !== undefined) {
          const index = /^\d{1,9}$/.test(options.startingAfter) ? Number(options.startingAfter) : -1
          const named = index < 0 ? Option.none() : yield* itemRows.itemAt(receipt.value.id, index)
          if (Option.isNone(named)) {
            return yield* new NotFound({ message: "starting_after names no item index of this receipt" })
          }
          afterIndex = index
        }
        const rows = yield* itemRows.itemsPage(receipt.value.id, afterIndex, options.limit + 1)
        return { items: rows.slice(0, options.limit).map(detailItemView), has_more: rows.length > options.limit }
      })

    return { get, list, items, totals } as const
  })
}) {}
