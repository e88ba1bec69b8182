import { describe, expect, it } from "vitest"
import { creditsToDollars } from "../../src/Domain/Money.js"

describe("dollars as people read them", () => {
  it("writes two decimals unless there is a fraction of a cent, exactly and with separators", () => {
    expect(creditsToDollars(4990n)).toBe("$4.99")
    expect(creditsToDollars(5000n)).toBe("$5.00")
    expect(creditsToDollars(4995n)).toBe("$4.995")
    expect(creditsToDollars(5n)).toBe("$0.005")
    expect(creditsToDollars(0n)).toBe("$0.00")
    expect(creditsToDollars(1234500n)).toBe("$1,234.50")
    expect(creditsToDollars(-1500n)).toBe("-$1.50")
    expect(creditsToDollars(-5n)).toBe("-$0.005")
    // Past what a double holds exactly: still every digit.
    expect(creditsToDollars(123456789012345678901n)).toBe("$123,456,789,012,345,678.901")
  })
})
