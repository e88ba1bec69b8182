import { Clock, Config, Effect, Layer, Ref } from "effect"
import { Redis } from "ioredis"
import { ExternalFailure } from "../../Errors/ExternalFailure.js"
import { makeMemoryRateLimitStore } from "./MemoryRateLimitStore.js"
import { RateLimitStore } from "./RateLimitStore.js"

/**
 * Counters in Redis, shared by every replica: INCR and PEXPIREAT in one MULTI, so a
 * counter never outlives its window.
 *
 * Redis away must not slow requests down nor switch limits off. Commands are bounded by
 * REDIS_COMMAND_TIMEOUT_MS (nothing queues while disconnected), and a circuit breaker
 * counts in this process's memory after a failure: for REDIS_RETRY_AFTER_MS no request
 * tries Redis, then one does, and success closes the breaker. The outage and the return
 * are logged once each, and `/v1/status` shows `memory_fallback` meanwhile. Limits are
 * then per replica, which is the best that can be done without the shared store.
 */
export const makeRedisRateLimitStore = (url: string) =>
  Effect.gen(function*() {
    const commandTimeoutMs = yield* Config.integer("REDIS_COMMAND_TIMEOUT_MS").pipe(Config.withDefault(250))
    const retryAfterMs = yield* Config.integer("REDIS_RETRY_AFTER_MS").pipe(Config.withDefault(5000))
    const client = yield* Effect.acquireRelease(
      Effect.sync(() =>
        new Redis(url, {
          connectTimeout: Math.max(commandTimeoutMs, 1000),
          commandTimeout: commandTimeoutMs,
          enableOfflineQueue: false,
          maxRetriesPerRequest: 0,
          // Reconnect in the background, never more often than once a second.
          retryStrategy: (attempt) => Math.min(attempt * 200, 1000)
        })
      ),
      (redis) => Effect.sync(() => redis.disconnect())
    )
    // Connection errors are expected while Redis is away: the breaker reports them.
    client.on("error", () => undefined)

    const fallback = yield* makeMemoryRateLimitStore
    /** When the breaker lets the next request try Redis again; 0 while closed. */
    const openUntil = yield* Ref.make(0)

    const incrementInRedis = (key: string, expiresAtMs: number) =>
      Effect.tryPromise({
        try: () => client.multi().incr(key).pexpireat(key, expiresAtMs).exec(),
        catch: (cause) => new ExternalFailure({ what: "INCR", cause })
      }).pipe(
        Effect.flatMap((results) => {
          const [error, count] = results?.[0] ?? ["empty MULTI answer", null]
          return error
            ? Effect.fail(new ExternalFailure({ what: "INCR", cause: error }))
            : Effect.succeed(Number(count))
        }),
        Effect.timeoutFail({
          duration: commandTimeoutMs,
          onTimeout: () => new ExternalFailure({ what: "INCR", cause: `no answer within ${commandTimeoutMs} ms` })
        })
      )

    const hit = (key: string, expiresAtMs: number) =>
      Effect.gen(function*() {
        const now = yield* Clock.currentTimeMillis
        const until = yield* Ref.get(openUntil)
        if (until > now) return yield* fallback.hit(key, expiresAtMs)
        return yield* incrementInRedis(key, expiresAtMs).pipe(
          Effect.tap(() =>
            until === 0 ? Effect.void : Effect.zipRight(
              Ref.set(openUntil, 0),
              Effect.logInfo("Redis is back; rate limits are shared again")
            )
          ),
          Effect.catchAll((error) =>
            Effect.gen(function*() {
              if (until === 0) {
                yield* Effect.logWarning(
                  `Redis unavailable (${error.detail}); counting rate limits in memory on this replica until it returns`
                )
              }
              yield* Ref.set(openUntil, now + retryAfterMs)
              return yield* fallback.hit(key, expiresAtMs)
            })
          )
        )
      })

    const state = Effect.map(
      Ref.get(openUntil),
      (until) => (until === 0 ? "redis" as const : "memory_fallback" as const)
    )
    return RateLimitStore.of({ hit, state })
  })

export const RedisRateLimitStoreLive = (url: string) => Layer.scoped(RateLimitStore, makeRedisRateLimitStore(url))
