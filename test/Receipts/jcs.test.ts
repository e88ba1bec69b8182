import { describe, expect, it } from "vitest"
import { jcs, NotCanonicalizable, sha256OfJcs } from "../../src/Services/Receipts/Jcs.js"

/** RFC 8785's own examples (sections 3.2.2 and 3.2.3), and what has no canonical form. */
describe("JSON canonicalisation (RFC 8785)", () => {
  it("writes numbers, strings and literals as the RFC's example", () => {
    const input = JSON.parse(
      String.raw`{"numbers": [333333333.33333329, 1E30, 4.50, 2e-3, 0.000000000000000000000000001],` +
        String.raw`"string": "\u20ac$\u000F\u000aA'\u0042\u0022\u005c\\\"\/", "literals": [null, true, false]}`
    )
    expect(jcs(input)).toBe(
      String.raw`{"literals":[null,true,false],"numbers":[333333333.3333333,1e+30,4.5,0.002,1e-27],` +
        String.raw`"string":"€$\u000f\nA'B\"\\\\\"/"}`
    )
  })

  it("sorts members by UTF-16 code units, recursively, and keeps array order", () => {
    const input = {
      "\u20ac": "Euro Sign",
      "\r": "Carriage Return",
      "\ufb33": "Hebrew Letter Dalet With Dagesh",
      "1": "One",
      "\ud83d\ude00": "Emoji: Grinning Face",
      "\u0080": "Control",
      "\u00f6": "Latin Small Letter O With Diaeresis"
    }
    // The RFC's expected order: CR, "1", U+0080, U+00F6, U+20AC, the emoji (a surrogate pair), U+FB33.
    const names = [...jcs(input).matchAll(/"([^"]+)":/g)].map((match) => match[1])
    expect(names).toEqual(["\\r", "1", "\u0080", "\u00f6", "\u20ac", "\ud83d\ude00", "\ufb33"])
    expect(jcs({ b: [3, { d: 1, c: 2 }], a: -0 })).toBe(`{"a":0,"b":[3,{"c":2,"d":1}]}`)
  })

  it("refuses what JSON cannot carry instead of guessing", () => {
    for (const bad of [{ a: undefined }, { a: 1n }, [Number.NaN], Infinity, { at: new Date(0) }, () => 1]) {
      expect(() => jcs(bad)).toThrow(NotCanonicalizable)
    }
  })

  it("hashes the canonical form, so member order does not change a hash", () => {
    expect(sha256OfJcs({ a: 1, b: [1, 2] })).toBe(sha256OfJcs({ b: [1, 2], a: 1 }))
    expect(sha256OfJcs({ a: 1 })).toBe("015abd7f5cc57a2dd94b7590f04ad8084273905ee33ec5cebeae62276a97f862")
  })
})
