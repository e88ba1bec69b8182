import { Effect } from "effect"
import type { ExecuteRequest } from "../../Domain/Purchasing.js"
import { gateMessages, priceAt } from "../../Domain/ToolGates.js"
import { InvalidInput, NotPurchasable, PriceAboveMax, ToolPaused, ToolUnavailable } from "../../Errors/ApiErrors.js"
import { unavailableReasons } from "../Tools/Tools.js"
import type { ToolRow } from "../Tools/ToolsRepo.js"

/**
 * What a purchase request may buy and at what price, before anything is held: the tool
 * on sale (`tool_paused`, `not_purchasable`, `tool_unavailable`), every input against the tool's fields
 * (`invalid_input`) and the price cap (`price_above_max`). No I/O.
 */
export interface PurchaseTerms {
  readonly price: bigint
  readonly count: number
  readonly amount: bigint
}

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

/**
 * The tool's price per success when it is on sale at `now`: paused answers `tool_paused`,
 * information only `not_purchasable`, a live tool failing a publishing gate (unpriced, no
 * resale rights, a failed adapter, an aged or weak benchmark) `tool_unavailable`.
 */
const priceOf = (row: ToolRow, now: Date) =>
  Effect.gen(function*() {
    const reasons = unavailableReasons(row, now)
    if (reasons.includes("tool_paused")) {
      const why = row.paused_reason === null ? "" : ` (${row.paused_reason})`
      return yield* new ToolPaused({ message: `${row.slug} is paused${why}; see POST /v1/recommend for alternatives` })
    }
    if (reasons.includes("information_only")) {
      return yield* new NotPurchasable({ message: `${row.slug} is information only and cannot be bought` })
    }
    const price = priceAt(row, now)
    if (reasons.length > 0 || price === null) {
      const gates = reasons.flatMap((reason) =>
        reason === "tool_paused" || reason === "information_only" ? [] : [reason]
      )
      return yield* new ToolUnavailable({
        message: `${row.slug} cannot be bought now: ${
          gates.map((gate) => gateMessages[gate]).join("; ")
        }; see POST /v1/recommend for alternatives`
      })
    }
    return price
  })

export interface TermsContext {
  readonly now: Date
  /** The per-item price an approval already granted locked (it is kept after a price change). */
  readonly lockedPrice?: bigint | null
}

export const purchaseTerms = (row: ToolRow, request: ExecuteRequest, context: TermsContext) =>
  Effect.gen(function*() {
    const current = yield* priceOf(row, context.now)
    const price = context.lockedPrice ?? current
    const problem = validateInputs(request.inputs, row.input, row.slug)
    if (problem !== undefined) return yield* new InvalidInput({ message: problem })
    const count = request.inputs.length
    const amount = price * BigInt(count)
    const maxPrice = request.max_price === undefined ? null : BigInt(request.max_price)
    if (maxPrice !== null && amount > maxPrice) {
      return yield* new PriceAboveMax({
        message: `${count} input${
          count === 1 ? "" : "s"
        } x ${price} credits = ${amount} credits, above max_price ${maxPrice}`
      })
    }
    return { price, count, amount } satisfies PurchaseTerms
  })
