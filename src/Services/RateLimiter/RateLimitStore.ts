import { Context, type Effect } from "effect"

/**
 * Where the counters are kept right now: in this process (no REDIS_URL), in Redis shared by
 * replicas, or in this process while Redis is unreachable (`memory_fallback`).
 */
export type RateLimitStoreState = "memory" | "redis" | "memory_fallback"

/** Where fixed-window counters live: in this process, or in Redis shared by replicas. */
export class RateLimitStore extends Context.Tag("RateLimiter/RateLimitStore")<RateLimitStore, {
  /** Adds one hit to counter `key`, which lapses at `expiresAtMs`; answers the count after it. */
  readonly hit: (key: string, expiresAtMs: number) => Effect.Effect<number>
  readonly state: Effect.Effect<RateLimitStoreState>
}>() {}
