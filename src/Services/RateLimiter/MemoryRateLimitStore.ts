import { Clock, Effect, Layer } from "effect"
import { RateLimitStore } from "./RateLimitStore.js"

/** Counters in this process: right for one replica (and for tests). */
export const makeMemoryRateLimitStore = Effect.sync(() => {
  const counters = new Map<string, { count: number; expiresAtMs: number }>()
  let nextSweepMs = 0
  const sweep = (now: number) => {
    for (const [key, counter] of counters) {
      if (counter.expiresAtMs <= now) counters.delete(key)
    }
    nextSweepMs = now + 60_000
  }
  return RateLimitStore.of({
    hit: (key, expiresAtMs) =>
      Effect.map(Clock.currentTimeMillis, (now) => {
        if (now >= nextSweepMs) sweep(now)
        const current = counters.get(key)
        if (current === undefined || current.expiresAtMs <= now) {
          counters.set(key, { count: 1, expiresAtMs })
          return 1
        }
        current.count += 1
        return current.count
      }),
    state: Effect.succeed("memory")
  })
})

export const MemoryRateLimitStoreLive = Layer.effect(RateLimitStore, makeMemoryRateLimitStore)
