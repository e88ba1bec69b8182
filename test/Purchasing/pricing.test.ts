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
  paused_reason: null,
  next_price_credits: null,
  next_price_from: null,
  adapter_ok: true,
  adapter_problem: null,
  latest_benchmark_date: "2026-11-01",
  latest_accuracy: 0.9,
  ...overrides
})

const input = { first_name: "Jane", domain: "acme.com" }
const now = new Date("2026-11-20T12:00:00Z")
const at = { now }

describe("purchase terms", () => {
  it.effect("a purchase holds price x inputs, and a max_price at exactly that amount passes", () =>
    Effect.gen(function*() {
      const terms = yield* purchaseTerms(tool(), {
        tool: "email-finder",
        inputs: [input, input, input],
        max_price: 120
      }, at)
      expect(terms).toEqual({ price: 40n, count: 3, amount: 120n })
    }))

  it.effect("a max_price below price x inputs answers price_above_max with the arithmetic", () =>
    Effect.gen(function*() {
      const error = yield* Effect.flip(
        purchaseTerms(tool(), { tool: "email-finder", inputs: [input, input, input], max_price: "119" }, at)
      )
      expect(error._tag).toBe("price_above_max")
      expect(error.message).toBe("3 inputs x 40 credits = 120 credits, above max_price 119")
    }))

  it.effect("a paused tool answers tool_paused, an information-only one not_purchasable", () =>
    Effect.gen(function*() {
      const request = { tool: "email-finder", inputs: [input] }
      const paused = yield* Effect.flip(
        purchaseTerms(tool({ status: "paused", paused_reason: "upstream outage" }), request, at)
      )
      expect(paused._tag).toBe("tool_paused")
      expect(paused.message).toContain("upstream outage")
      const info = yield* Effect.flip(purchaseTerms(tool({ status: "information_only" }), request, at))
      expect(info._tag).toBe("not_purchasable")
    }))

  it.effect("a live tool failing a publishing gate answers tool_unavailable naming the gate", () =>
    Effect.gen(function*() {
      const request = { tool: "email-finder", inputs: [input] }
      const cases: ReadonlyArray<[Partial<ToolRow>, string]> = [
        [{ price_per_success_credits: null }, "no price_per_success_credits"],
        [{ resale_rights: false }, "no signed resale rights"],
        [{ adapter_ok: false }, "failed its health check"],
        [{ latest_benchmark_date: "2026-10-15" }, "no benchmark in the last 35 days"],
        [{ latest_benchmark_date: null, latest_accuracy: null }, "no benchmark in the last 35 days"],
        [{ latest_accuracy: 0.59 }, "under the 60% floor"]
      ]
      for (const [overrides, reason] of cases) {
        const error = yield* Effect.flip(purchaseTerms(tool(overrides), request, at))
        expect(error._tag).toBe("tool_unavailable")
        expect(error.message).toContain(reason)
      }
      // 35 days old to the day is still within the window.
      const edge = yield* purchaseTerms(tool({ latest_benchmark_date: "2026-10-16" }), request, at)
      expect(edge.price).toBe(40n)
    }))

  it.effect("a scheduled price counts from its valid_from; an approval's locked price wins", () =>
    Effect.gen(function*() {
      const request = { tool: "email-finder", inputs: [input, input] }
      const scheduled = tool({ next_price_credits: 55n, next_price_from: new Date("2026-11-20T12:00:01Z") })
      expect((yield* purchaseTerms(scheduled, request, at)).amount).toBe(80n)
      const later = { now: new Date("2026-11-20T12:00:01Z") }
      expect((yield* purchaseTerms(scheduled, request, later)).amount).toBe(110n)
      expect((yield* purchaseTerms(scheduled, request, { ...later, lockedPrice: 40n })).amount).toBe(80n)
    }))

  it.effect("every input must carry the tool's required fields and nothing unknown", () =>
    Effect.gen(function*() {
      const missing = yield* Effect.flip(
        purchaseTerms(tool(), { tool: "x", inputs: [input, { first_name: "Jo" }] }, at)
      )
      expect(missing.message).toBe(
        "inputs[1].domain is required (non-empty text); email-finder takes first_name, domain; optional last_name"
      )
      const unknown = yield* Effect.flip(purchaseTerms(tool(), { tool: "x", inputs: [{ ...input, age: 3 }] }, at))
      expect(unknown.message).toContain("unknown field `age`")
      const nested = yield* Effect.flip(purchaseTerms(tool(), { tool: "x", inputs: [{ ...input, last_name: {} }] }, at))
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
