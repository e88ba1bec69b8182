import { Effect, Option, Schema, Struct } from "effect"
import type { OrgId, ReceiptId } from "../../Domain/Ids.js"
import type { PurchaseItem } from "../../Domain/PurchaseItem.js"
import {
  ReceiptItem,
  receiptItemColumns,
  type ReceiptItemDetail,
  ReceiptSummary,
  type ResultItem
} from "../../Domain/Purchasing.js"
import { NotFound } from "../../Errors/ApiErrors.js"
import { RecordSigner } from "../Receipts/RecordSigner.js"
import { sha256OfCanonical } from "./Canonical.js"
import { ItemsRepo } from "./ItemsRepo.js"
import { ReceiptsRepo } from "./ReceiptsRepo.js"

/**
 * Receipts: one per purchase, written when it starts, with one item per input (provider,
 * cost, result hash, check version, outcome, refund). The org's agents, members and org
 * keys read them, signed. The inputs and kept results are a list of their own for the org's
 * members and org keys (`items`), unsigned: the signed record carries their hashes, and a
 * result is forgotten after 30 days while the receipt stays.
 */
const CHARGED = new Set(["passed", "partial"])

export const itemView = (row: PurchaseItem): ReceiptItem => ({
  ...Struct.pick(row, ...receiptItemColumns),
  charged: CHARGED.has(row.status),
  input_hash: sha256OfCanonical(row.input),
  check: row.check_id === null || row.check_version === null ? null : { id: row.check_id, version: row.check_version }
})

export const resultItemView = (row: PurchaseItem): ResultItem => ({
  ...itemView(row),
  result: CHARGED.has(row.status) ? (row.result ?? null) : null
})

export const detailItemView = (row: PurchaseItem): ReceiptItemDetail => ({ ...resultItemView(row), input: row.input })

const wireOf = Schema.encode(ReceiptSummary)
const itemsOnWire = Schema.encode(Schema.Array(ReceiptItem))

export class Receipts extends Effect.Service<Receipts>()("Purchasing/Receipts", {
  dependencies: [ReceiptsRepo.Default, ItemsRepo.Default, RecordSigner.Default],
  effect: Effect.gen(function*() {
    const receiptRows = yield* ReceiptsRepo
    const itemRows = yield* ItemsRepo
    const signer = yield* RecordSigner

    const notFound = new NotFound({ message: "No receipt with that id in this org" })

    const totals = (orgId: OrgId, id: ReceiptId) =>
      Effect.flatMap(
        receiptRows.receiptWithTotals(orgId, id),
        Option.match({ onNone: () => Effect.fail(notFound), onSome: Effect.succeed })
      )

    /**
     * The receipt with its items and signature, over the record as the wire shows it (the
     * HttpApi encodes the summary the same way).
     */
    const get = (orgId: OrgId, id: ReceiptId) =>
      Effect.gen(function*() {
        const receipt = yield* totals(orgId, id)
        const items = (yield* itemRows.items(receipt.id)).map(itemView)
        const { signature } = yield* signer.signed({
          ...yield* Effect.orDie(wireOf(receipt)),
          items: yield* Effect.orDie(itemsOnWire(items))
        })
        return { ...receipt, items, signature }
      })

    const list = (orgId: OrgId, options: { readonly limit: number; readonly startingAfter?: ReceiptId | undefined }) =>
      Effect.gen(function*() {
        let after = Option.none<{ readonly created_at: Date; readonly id: ReceiptId }>()
        if (options.startingAfter !== undefined) {
          after = yield* receiptRows.receiptCursor(orgId, options.startingAfter)
          if (Option.isNone(after)) {
            return yield* new NotFound({ message: "starting_after names no receipt of this org" })
          }
        }
        const rows = yield* receiptRows.listReceipts(orgId, options.limit + 1, after)
        return { receipts: rows.slice(0, options.limit), has_more: rows.length > options.limit }
      })

    /** A receipt's items with their inputs and kept results, by index, a page at a time. */
    const items = (
      orgId: OrgId,
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
