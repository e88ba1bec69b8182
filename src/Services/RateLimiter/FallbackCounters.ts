/**
 * The counters a replica keeps beside Redis, for when Redis is unreachable. For each
 * counter key it remembers the count Redis last answered (`shared`) and the hits it counted
 * itself since (`pending`). While in memory, a replica admits its share of what was left of
 * the limit when it last saw the shared count: every hit after its first stands for one hit
 * on each of the `replicas` replicas, so together they stay near the limit instead of each
 * admitting all of it. When Redis answers again the pending hits are added to the shared
 * counter (see RedisRateLimitStore.ts), so the window it comes back in stays exact.
 */
interface Counter {
  shared: number
  pending: number
  readonly expiresAtMs: number
}

export const makeFallbackCounters = () => {
  const counters = new Map<string, Counter>()
  let nextSweepMs = 0
  /** The counter of `key` in the window ending at `expiresAtMs` (a new one once it lapsed). */
  const counter = (key: string, expiresAtMs: number, now: number): Counter => {
    if (now >= nextSweepMs) {
      for (const [k, c] of counters) if (c.expiresAtMs <= now) counters.delete(k)
      nextSweepMs = now + 60_000
    }
    const current = counters.get(key)
    if (current !== undefined && current.expiresAtMs > now) return current
    const fresh = { shared: 0, pending: 0, expiresAtMs }
    counters.set(key, fresh)
    return fresh
  }
  return {
    /** Hits counted here and not yet added to Redis. */
    pending: (key: string, now: number) => {
      const current = counters.get(key)
      return current !== undefined && current.expiresAtMs > now ? current.pending : 0
    },
    /** Redis answered `count` for `key`, `added` of the pending hits included. */
    shared: (key: string, expiresAtMs: number, count: number, added: number, now: number) => {
      const current = counter(key, expiresAtMs, now)
      current.shared = count
      current.pending = Math.max(0, current.pending - added)
    },
    /** Counts one hit here; answers the shared count it stands for across `replicas` replicas. */
    hit: (key: string, expiresAtMs: number, replicas: number, now: number) => {
      const current = counter(key, expiresAtMs, now)
      current.pending += 1
      return current.shared + (current.pending - 1) * replicas + 1
    }
  }
}
