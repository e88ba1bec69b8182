import { Cache, Duration, Effect, Either } from "effect"

/** A record's last use is kept to the minute. */
export const USAGE_STAMP_MS = 60_000

/**
 * Which last-use stamps are due in this replica: `due(key)` is true once per key and
 * minute (an effect Cache of the keys stamped, at most 100,000, each kept a minute on the
 * request's clock). It spares the database a write per request; the stamping statements
 * also skip a fresher stamp written by another replica.
 */
export const makeUsageStamps = Effect.map(
  Cache.make({ capacity: 100_000, timeToLive: Duration.millis(USAGE_STAMP_MS), lookup: (_key: string) => Effect.void }),
  (stamped) => ({ due: (key: string) => Effect.map(stamped.getEither(key), Either.isRight) }) as const
)
