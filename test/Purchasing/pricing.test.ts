import { describe, expect, it } from "@effect/vitest"
import { Effect } from "effect"
import { gatewayPrice, plans } from "../../src/Domain/Plans.js"
import { purchaseTerms } from "../../src/Services/Purchasing/PurchaseTerms.js"
import type { ToolRow } from "../../src/Services/Tools/ToolsRepo.js"

/** The pricing rules on their own, without a database: what a purchase costs and when it may not be bought. */
const tool = (overrides: Partial<ToolRow> = {}): ToolRow => ({
  id: "7d0f5f39-0000-4000-8000-000000000001",
  slug: "email-finder",
  name: "Email finder",
  provider: "acme",
  provider_name: "Acme",
  task_type: "email_find",
  description: "Finds an address",
  status: "live",
  resale_rights: true,
  gateway_endpoint: "acme/find",
  input: { required: ["first_name", "domain"], optional: ["last_name"] },
  price_per_success_credits: 40n,
  check_id: "email_find.deliverable_address",
  check_version: "1.2.0",
  check_verifies: "deliverable",
  ...overrides
})

const input = { first_name: "Jane", domain: "acme.com" }

describe("purchase terms", () => {
  it.effect("a purchase holds price x inputs, and a max_price at exactly that amount passes", () =>
    Effect.gen(function*() {
      const terms = yield* purchaseTerms(tool(), {
        tool: "email-finder",
        inputs: [input, input, input],
        max_price: 120
      })
      expect(terms).toEqual({ price: 40n, count: 3, amount: 120n })
    }))

  it.effect("a max_price below price x inputs answers price_above_max with the arithmetic", () =>
    Effect.gen(function*() {
      const error = yield* Effect.flip(
        purchaseTerms(tool(), { tool: "email-finder", inputs: [input, input, input], max_price: "119" })
      )
      expect(error._tag).toBe("price_above_max")
      expect(error.message).toBe("3 inputs x 40 credits = 120 credits, above max_price 119")
    }))

  it.effect("a paused, information-only, unpriced or unresellable tool cannot be bought", () =>
    Effect.gen(function*() {
      const request = { tool: "email-finder", inputs: [input] }
      expect((yield* Effect.flip(purchaseTerms(tool({ status: "paused" }), request)))._tag).toBe("tool_paused")
      for (
        const refused of [
          tool({ status: "information_only" }),
          tool({ price_per_success_credits: null }),
          tool({ resale_rights: false })
        ]
      ) {
        expect((yield* Effect.flip(purchaseTerms(refused, request)))._tag).toBe("not_purchasable")
      }
    }))

  it.effect("every input must carry the tool's required fields and nothing unknown", () =>
    Effect.gen(function*() {
      const missing = yield* Effect.flip(purchaseTerms(tool(), { tool: "x", inputs: [input, { first_name: "Jo" }] }))
      expect(missing.message).toBe(
        "inputs[1].domain is required (non-empty text); email-finder takes first_name, domain; optional last_name"
      )
      const unknown = yield* Effect.flip(purchaseTerms(tool(), { tool: "x", inputs: [{ ...input, age: 3 }] }))
      expect(unknown.message).toContain("unknown field `age`")
      const nested = yield* Effect.flip(purchaseTerms(tool(), { tool: "x", inputs: [{ ...input, last_name: {} }] }))
      expect(nested.message).toBe("inputs[0].last_name must be text, a number or a boolean")
    }))
})

describe("gateway prices by plan", () => {
  it("scales the base price by the plan's basis points, rounding up, never under 1 credit", () => {
    for (const plan of ["payg", "pro", "max"] as const) {
      const bp = BigInt(plans[plan].gateway_price_basis_points)
      for (const base of [1n, 7n, 25n, 1000n]) {
        const price = gatewayPrice(base, plan)
        expect(price * 10_000n >= base * bp).toBe(true)
        expect((price - 1n) * 10_000n < base * bp || price === 1n).toBe(true)
        expect(price >= 1n).toBe(true)
      }
    }
    expect(gatewayPrice(25n, "payg")).toBe(25n)
  })
})
