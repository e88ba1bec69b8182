import { Context, type Effect } from "effect"

/** Where fixed-window counters live: in this process, or in Redis shared by replicas. */
export class RateLimitStore extends Context.Tag("RateLimitStore")<RateLimitStore, {
  /** Adds one hit to counter `key`, which lapses at `expiresAtMs`; answers the count after it. */
  readonly hit: (key: string, expiresAtMs: number) => Effect.Effect<number>
}>() {}
