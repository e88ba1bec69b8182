import { RateLimiter as Library } from "@effect/experimental"
import * as LibraryRedis from "@effect/experimental/RateLimiter/Redis"
import { describe, expect, it } from "@effect/vitest"
import { Context, Duration, Effect, Either, Layer, TestClock } from "effect"
import { randomBytes } from "node:crypto"
import { MemoryRateLimitStoreLive } from "../../src/Services/RateLimiter/MemoryRateLimitStore.js"
import { RateLimiter } from "../../src/Services/RateLimiter/RateLimiter.js"

/**
 * Why the rate limiter is not `@effect/experimental`'s (docs/decisions.md, "The rate limiter
 * stays ours"): the library's "fixed-window", measured beside ours on the same hits. The
 * spec's windows are fixed and aligned to the clock (a minute's limit resets at the whole
 * minute, on every replica alike, and `RateLimit-Reset` says when); the library's counter
 * lives window / limit longer with each hit, from the first one. Should a release of the
 * library align its windows, these cases fail and the choice is worth making again.
 */
const redisUrl = process.env.TEST_REDIS_URL ?? "redis://127.0.0.1:6379"
const minute = 60_000
const limit = 3

/** The library's limiter on its memory store, and ours on its memory store, at `time`. */
const bothAt = (time: number) =>
  Effect.gen(function*() {
    yield* TestClock.setTime(time)
    const library = yield* Effect.provide(Library.make, Library.layerStoreMemory)
    const ours = Context.get(
      yield* Layer.build(RateLimiter.Default.pipe(Layer.provide(MemoryRateLimitStoreLive))),
      RateLimiter
    )
    const policy = { name: "measure", limit, windowSeconds: 60 }
    return {
      library: (key: string) =>
        Effect.either(library.consume({ key, limit, window: "1 minute", algorithm: "fixed-window" })),
      ours: (subject: string) => ours.consume(policy, subject)
    }
  })

const resetSeconds = (answer: Either.Either<Library.ConsumeResult, Library.RateLimiterError>) =>
  Either.match(answer, {
    onLeft: (error) => (error.reason === "Exceeded" ? Duration.toSeconds(error.retryAfter) : Number.NaN),
    onRight: (result) => Duration.toSeconds(result.resetAfter)
  })

describe("the library's fixed window against the spec's", () => {
  it.scoped("its reset is not the window's end: ten seconds before the minute ends, it says 60 s", () =>
    Effect.gen(function*() {
      const limiters = yield* bothAt(7 * minute + 50_000)
      const library = []
      const ours = []
      for (let i = 0; i < limit; i++) {
        library.push(resetSeconds(yield* limiters.library("a")))
        ours.push((yield* limiters.ours("a")).resetSeconds)
      }
      // Each hit adds window / limit (20 s) to the library's counter, from the first hit.
      expect(library).toEqual([20, 40, 60])
      expect(ours).toEqual([10, 10, 10])
    }))

  it.scoped("its window does not end at the whole minute: the next minute's first hit is refused", () =>
    Effect.gen(function*() {
      const limiters = yield* bothAt(7 * minute + 50_000)
      for (let i = 0; i < limit; i++) {
        yield* limiters.library("b")
        yield* limiters.ours("b")
      }
      yield* TestClock.adjust("10 seconds")
      const library = yield* limiters.library("b")
      expect(Either.isLeft(library)).toBe(true)
      expect(resetSeconds(library)).toBe(50)
      expect((yield* limiters.ours("b")).allowed).toBe(true)
    }))

  it.scoped("a window in its key does not make it fixed: more than the limit in one clock minute", () =>
    Effect.gen(function*() {
      const windowStart = 7 * minute
      const limiters = yield* bothAt(windowStart)
      const key = `c:${windowStart}`
      const admitted = { library: 0, ours: 0 }
      const hit = Effect.gen(function*() {
        if (Either.isRight(yield* limiters.library(key))) admitted.library++
        if ((yield* limiters.ours("c")).allowed) admitted.ours++
      })
      yield* hit
      // The library's counter of one hit lapses after 20 s, inside the same minute.
      yield* TestClock.adjust("21 seconds")
      for (let i = 0; i < limit; i++) yield* hit
      expect(admitted).toEqual({ library: 4, ours: 3 })
    }))

  it.scoped("its Redis store counts the same way: the reset grows 20 s a hit", () =>
    Effect.gen(function*() {
      const url = new URL(redisUrl)
      const store = yield* Layer.build(LibraryRedis.layerStore({ host: url.hostname, port: Number(url.port || 6379) }))
      const library = yield* Effect.provide(Library.make, Layer.succeedContext(store))
      const key = `measure-${randomBytes(4).toString("hex")}`
      const consume = library.consume({ key, limit, window: "1 minute", algorithm: "fixed-window" })
      const resets = []
      for (let i = 0; i < limit; i++) resets.push(Math.ceil(Duration.toSeconds((yield* consume).resetAfter)))
      expect(resets).toEqual([20, 40, 60])
    }), { timeout: 20_000 })
})
