import { describe, expect, it } from "@effect/vitest"
import { Effect, TestClock, TestContext } from "effect"
import { makeUsageStamps, USAGE_STAMP_MS } from "../../src/Services/Auth/UsageStamps.js"

/** The replica's own rule on last-use stamps: one write per key and minute, on the request's clock. */
describe("usage stamps in a replica", () => {
  it.effect("are due once per key and minute", () =>
    Effect.gen(function*() {
      const stamps = yield* makeUsageStamps
      expect(yield* stamps.due("agent:a:127.0.0.1")).toBe(true)
      expect(yield* stamps.due("agent:a:127.0.0.1")).toBe(false)
      expect(yield* stamps.due("agent:a:10.0.0.1")).toBe(true) // another address is another stamp
      yield* TestClock.adjust(USAGE_STAMP_MS)
      expect(yield* stamps.due("agent:a:127.0.0.1")).toBe(false) // a minute to the millisecond: not yet
      yield* TestClock.adjust(1)
      expect(yield* stamps.due("agent:a:127.0.0.1")).toBe(true)
      expect(yield* stamps.due("agent:a:127.0.0.1")).toBe(false)
    }).pipe(Effect.provide(TestContext.TestContext)))
})
