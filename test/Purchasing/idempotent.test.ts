import { describe, expect, it } from "@effect/vitest"
import { Effect, Either, Option, Ref } from "effect"
import { idempotent, KeyTaken, type UsedKey } from "../../src/Services/Idempotency/Idempotent.js"

/**
 * The idempotency wrapper on its own, with the keys kept in memory: when a request runs,
 * when a key replays, and each refusal.
 */
type Kept = ReadonlyMap<string, UsedKey<string, never, never>>

const harness = (kept: Kept, options: { readonly takenBy?: UsedKey<string, never, never> } = {}) =>
  Effect.gen(function*() {
    const runs = yield* Ref.make<Array<string | null>>([])
    const store = new Map(kept)
    const call = (key: string | null, fingerprint: string) =>
      idempotent({
        key,
        fingerprint,
        noun: "purchase",
        lookup: (k) => Effect.sync(() => Option.fromNullable(store.get(k))),
        run: (k) =>
          Effect.gen(function*() {
            yield* Ref.update(runs, (all) => [...all, k])
            if (k !== null && options.takenBy !== undefined) {
              // A concurrent twin took the key between the lookup and this transaction.
              store.set(k, options.takenBy)
              return yield* new KeyTaken()
            }
            return `ran:${fingerprint}`
          })
      })
    return { call, runs: Ref.get(runs) }
  })

const answered = (fingerprint: string, answer: string): UsedKey<string, never, never> => ({
  fingerprint,
  answer: Effect.succeed(Option.some(answer))
})
const running = (fingerprint: string): UsedKey<string, never, never> => ({
  fingerprint,
  answer: Effect.succeed(Option.none())
})

describe("idempotent", () => {
  it.effect("without a key, the request simply runs", () =>
    Effect.gen(function*() {
      const { call, runs } = yield* harness(new Map())
      expect(yield* call(null, "a")).toBe("ran:a")
      expect(yield* runs).toEqual([null])
    }))

  it.effect("a new key runs the request under that key", () =>
    Effect.gen(function*() {
      const { call, runs } = yield* harness(new Map())
      expect(yield* call("k", "a")).toBe("ran:a")
      expect(yield* runs).toEqual(["k"])
    }))

  it.effect("an answered key with the same request replays its answer without running", () =>
    Effect.gen(function*() {
      const { call, runs } = yield* harness(new Map([["k", answered("a", "first")]]))
      expect(yield* call("k", "a")).toBe("first")
      expect(yield* runs).toEqual([])
    }))

  it.effect("a key used with another request answers idempotency_conflict and runs nothing", () =>
    Effect.gen(function*() {
      const { call, runs } = yield* harness(new Map([["k", answered("a", "first")]]))
      const error = yield* Effect.flip(call("k", "b"))
      expect(error._tag).toBe("idempotency_conflict")
      expect(error.message).toMatch(/new purchase/)
      expect(yield* runs).toEqual([])
    }))

  it.effect("a key whose request still runs answers request_in_progress", () =>
    Effect.gen(function*() {
      const { call, runs } = yield* harness(new Map([["k", running("a")]]))
      expect((yield* Effect.flip(call("k", "a")))._tag).toBe("request_in_progress")
      expect(yield* runs).toEqual([])
    }))

  it.effect("a key whose request died answers what finishing it answers", () =>
    Effect.gen(function*() {
      const finished = yield* Ref.make(false)
      const lapsed: UsedKey<string, never, never> = {
        fingerprint: "a",
        answer: Effect.as(Ref.set(finished, true), Option.some("finished"))
      }
      const { call } = yield* harness(new Map([["k", lapsed]]))
      expect(yield* call("k", "a")).toBe("finished")
      expect(yield* Ref.get(finished)).toBe(true)
    }))

  it.effect("a key taken by a concurrent twin answers as the key then says", () =>
    Effect.gen(function*() {
      const twinDone = yield* harness(new Map(), { takenBy: answered("a", "twin's answer") })
      expect(yield* twinDone.call("k", "a")).toBe("twin's answer")
      const twinRunning = yield* harness(new Map(), { takenBy: running("a") })
      const stillRunning = yield* Effect.either(twinRunning.call("k", "a"))
      expect(Either.isLeft(stillRunning) && stillRunning.left._tag).toBe("request_in_progress")
      const twinOther = yield* harness(new Map(), { takenBy: answered("b", "other") })
      expect((yield* Effect.flip(twinOther.call("k", "a")))._tag).toBe("idempotency_conflict")
    }))
})
