import { describe, expect, it } from "@effect/vitest"
import { Data, Effect, Either, Option, Ref } from "effect"
import { idempotent, KeyTaken, refusalAsKeySays, type UsedKey } from "../../src/Services/Idempotency/Idempotent.js"

/**
 * The idempotency wrapper on its own, with the keys kept in memory: when a request runs,
 * when a key replays, and each refusal.
 */
type Kept = ReadonlyMap<string, UsedKey<string, never, never>>

class Refused extends Data.TaggedError("refused") {}

const harness = (
  kept: Kept,
  options: {
    readonly takenBy?: UsedKey<string, never, never>
    /** Run before the lookup; the request refuses (Refused) before taking its key. */
    readonly lookupFirst?: false
    readonly refuses?: boolean
  } = {}
) =>
  Effect.gen(function*() {
    const runs = yield* Ref.make<Array<string | null>>([])
    const lookups = yield* Ref.make(0)
    const store = new Map(kept)
    const call = (key: string | null, fingerprint: string) =>
      idempotent({
        key,
        fingerprint,
        noun: "purchase",
        lookup: (k) =>
          Effect.zipRight(Ref.update(lookups, (n) => n + 1), Effect.sync(() => Option.fromNullable(store.get(k)))),
        ...(options.lookupFirst === false ? { lookupFirst: false } : {}),
        run: (k, keyFree) =>
          Effect.gen(function*() {
            yield* Ref.update(runs, (all) => [...all, k])
            if (options.refuses === true) {
              return yield* Effect.fail(new Refused()).pipe(refusalAsKeySays(keyFree))
            }
            if (k !== null && options.takenBy !== undefined) {
              // A concurrent twin took the key between the lookup and this transaction.
              store.set(k, options.takenBy)
              return yield* new KeyTaken()
            }
            // Taking the key finds it used (as the purchase's first write does).
            if (k !== null && store.has(k)) return yield* new KeyTaken()
            return `ran:${fingerprint}`
          })
      })
    return { call, runs: Ref.get(runs), lookups: Ref.get(lookups) }
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

  it.effect("run before the lookup, a new key runs without reading the key at all", () =>
    Effect.gen(function*() {
      const { call, lookups, runs } = yield* harness(new Map(), { lookupFirst: false })
      expect(yield* call("k", "a")).toBe("ran:a")
      expect(yield* runs).toEqual(["k"])
      expect(yield* lookups).toBe(0)
    }))

  it.effect("run before the lookup, a used key answers as it says when taking it", () =>
    Effect.gen(function*() {
      const { call, lookups } = yield* harness(new Map([["k", answered("a", "first")]]), { lookupFirst: false })
      expect(yield* call("k", "a")).toBe("first")
      expect(yield* lookups).toBe(1)
      const other = yield* harness(new Map([["k", answered("a", "first")]]), { lookupFirst: false })
      expect((yield* Effect.flip(other.call("k", "b")))._tag).toBe("idempotency_conflict")
    }))

  it.effect("run before the lookup, a refusal stands only when the key is free", () =>
    Effect.gen(function*() {
      const free = yield* harness(new Map(), { lookupFirst: false, refuses: true })
      expect((yield* Effect.flip(free.call("k", "a")))._tag).toBe("refused")
      const used = yield* harness(new Map([["k", answered("a", "first")]]), { lookupFirst: false, refuses: true })
      expect(yield* used.call("k", "a")).toBe("first")
      const inFlight = yield* harness(new Map([["k", running("a")]]), { lookupFirst: false, refuses: true })
      expect((yield* Effect.flip(inFlight.call("k", "a")))._tag).toBe("request_in_progress")
      const noKey = yield* harness(new Map(), { lookupFirst: false, refuses: true })
      expect((yield* Effect.flip(noKey.call(null, "a")))._tag).toBe("refused")
    }))
})
