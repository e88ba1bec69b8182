import { describe, expect, it } from "vitest"
import { approvalNeeded } from "../../src/Domain/ApprovalRule.js"

/** The approval rule on its own: budget first, then threshold, both inclusive of the limit. */
describe("approvalNeeded", () => {
  const base = { amount: 100n, spentThisMonth: 0n, monthlyBudget: 1_000n, threshold: 200n }

  it("lets a purchase within budget and threshold go ahead", () => {
    expect(approvalNeeded(base)).toBeNull()
  })

  it("allows exactly the budget and exactly the threshold", () => {
    expect(approvalNeeded({ ...base, spentThisMonth: 900n })).toBeNull()
    expect(approvalNeeded({ ...base, amount: 200n })).toBeNull()
  })

  it("asks over the budget, counting what was already spent", () => {
    expect(approvalNeeded({ ...base, spentThisMonth: 901n })).toBe("over_budget")
    expect(approvalNeeded({ ...base, amount: 1_001n, threshold: null })).toBe("over_budget")
  })

  it("asks over the threshold, and never without one", () => {
    expect(approvalNeeded({ ...base, amount: 201n })).toBe("over_threshold")
    expect(approvalNeeded({ ...base, amount: 900n, threshold: null })).toBeNull()
  })

  it("names the budget when both are passed (its approval lifts the budget)", () => {
    expect(approvalNeeded({ ...base, amount: 950n, spentThisMonth: 100n })).toBe("over_budget")
  })

  it("uses exact integers: no rounding at large amounts", () => {
    const big = 2n ** 62n
    expect(approvalNeeded({ amount: 1n, spentThisMonth: big, monthlyBudget: big + 1n, threshold: null })).toBeNull()
    expect(approvalNeeded({ amount: 2n, spentThisMonth: big, monthlyBudget: big + 1n, threshold: null })).toBe(
      "over_budget"
    )
  })
})
