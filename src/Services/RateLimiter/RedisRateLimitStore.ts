import { Effect, Layer } from "effect"
import { Redis } from "ioredis"
import { RateLimitStore } from "./RateLimitStore.js"

/**
 * Counters in Redis, shared by every replica: INCR and PEXPIREAT in one MULTI, so a
 * counter never outlives its window. When Redis cannot answer, the request is let through
 * and the failure logged: rate limits protect capacity, not money.
 */
export const makeRedisRateLimitStore = (url: string) =>
  Effect.gen(function*() {
    const client = yield* Effect.acquireRelease(
      Effect.sync(() => new Redis(url, { maxRetriesPerRequest: 1, enableOfflineQueue: true, lazyConnect: false })),
      (redis) => Effect.promise(() => redis.quit().catch(() => "OK"))
    )
    return RateLimitStore.of({
      hit: (key, expiresAtMs) =>
        Effect.tryPromise(() => client.multi().incr(key).pexpireat(key, expiresAtMs).exec()).pipe(
          Effect.flatMap((results) => {
            const [error, count] = results?.[0] ?? [new Error("empty MULTI answer"), null]
            return error ? Effect.fail(error) : Effect.succeed(Number(count))
          }),
          Effect.catchAll((error) =>
            Effect.as(Effect.logWarning("Rate-limit store unavailable; request allowed", error), 0)
          )
        )
    })
  })

export const RedisRateLimitStoreLive = (url: string) => Layer.scoped(RateLimitStore, makeRedisRateLimitStore(url))
