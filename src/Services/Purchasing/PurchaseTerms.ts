import { Effect } from "effect"
import type { ExecuteRequest } from "../../Domain/Purchasing.js"
import { isPurchasable } from "../../Domain/Tool.js"
import { InvalidInput, NotPurchasable, PriceAboveMax, ToolPaused } from "../../Errors/ApiErrors.js"
import type { ToolRow } from "../Tools/ToolsRepo.js"

/**
 * What a purchase request may buy and at what price, before anything is held: the tool
 * on sale (`tool_paused`, `not_purchasable`), every input against the tool's fields
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

/** The tool's price per success, when it is on sale. */
const priceOf = (row: ToolRow) =>
  Effect.gen(function*() {
    if (row.status === "paused") {
      return yield* new ToolPaused({ message: `${row.slug} is paused; see POST /v1/recommend for alternatives` })
    }
    const price = row.price_per_success_credits
    if (
      price === null ||
      !isPurchasable({ status: row.status, price_per_success_credits: Number(price), resale_rights: row.resale_rights })
    ) {
      return yield* new NotPurchasable({
        message: row.status === "information_only"
          ? `${row.slug} is information only and cannot be bought`
          : `${row.slug} cannot be bought (it has no price or no resale rights)`
      })
    }
    return price
  })

export const purchaseTerms = (row: ToolRow, request: ExecuteRequest) =>
  Effect.gen(function*() {
    const price = yield* priceOf(row)
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
