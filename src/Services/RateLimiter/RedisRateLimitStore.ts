import { Clock, Config, Effect, Layer } from "effect"
import { Redis, type Result } from "ioredis"
import { ExternalFailure } from "../../Errors/ExternalFailure.js"
import { makeFallbackCounters } from "./FallbackCounters.js"
import { RateLimitStore } from "./RateLimitStore.js"
import { replicaHeartbeat } from "./ReplicaHeartbeat.js"

declare module "ioredis" {
  interface RedisCommander<Context> {
    /** The script defined below: INCRBY the key, PEXPIREAT its window's end; the new count. */
    countHit(key: string, by: number, expiresAtMs: number): Result<number, Context>
  }
}

/**
 * Counters in Redis, shared by every replica: INCRBY and PEXPIREAT in one script (one
 * command, run atomically), so a counter never outlives its window. Commands of concurrent
 * requests leave in one write (ioredis's auto-pipelining), and a command's deadline is the
 * client's own (`commandTimeout`), not a timer raced per request.
 *
 * A slow Redis is waited for: on a busy machine answers come late, and counting anywhere
 * else loosens the limit. Only an unreachable Redis moves counting into this process: a
 * connection refused or closed (nothing queues while disconnected, so that is known at
 * once), or no answer within REDIS_COMMAND_TIMEOUT_MS (a hung server). Then a circuit
 * breaker counts in memory for REDIS_RETRY_AFTER_MS, after which one request tries Redis
 * again and success closes it. In memory a replica admits its share of the limit, divided
 * among the replicas known (ReplicaHeartbeat.ts, FallbackCounters.ts), and the hits it
 * counted are added to Redis when it answers again. The outage and the return are logged
 * once each, and `/v1/status` shows `memory_fallback` meanwhile.
 */
export const makeRedisRateLimitStore = (url: string) =>
  Effect.gen(function*() {
    const commandTimeoutMs = yield* Config.integer("REDIS_COMMAND_TIMEOUT_MS").pipe(Config.withDefault(2000))
    const retryAfterMs = yield* Config.integer("REDIS_RETRY_AFTER_MS").pipe(Config.withDefault(5000))
    const client = yield* Effect.acquireRelease(
      Effect.sync(() =>
        new Redis(url, {
          connectTimeout: Math.max(commandTimeoutMs, 1000),
          commandTimeout: commandTimeoutMs,
          enableAutoPipelining: true,
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
    // Commands are refused until the connection is up: give it its chance before serving.
    yield* Effect.async<void>((resume) => {
      if (client.status === "ready") return resume(Effect.void)
      const done = () => resume(Effect.void)
      client.once("ready", done)
      return Effect.sync(() => client.off("ready", done))
    }).pipe(Effect.timeout(Math.max(commandTimeoutMs, 1000)), Effect.ignore)

    const replicas = yield* replicaHeartbeat(client, commandTimeoutMs)
    const fallback = makeFallbackCounters()
    /** When the breaker lets a request try Redis again; 0 while closed. */
    let retryAtMs = 0

    // EVALSHA, loaded by the client on first use (EVAL once when the server does not know it).
    client.defineCommand("countHit", {
      numberOfKeys: 1,
      lua: `local count = redis.call("INCRBY", KEYS[1], ARGV[1])
redis.call("PEXPIREAT", KEYS[1], ARGV[2])
return count`
    })
    const incrementInRedis = (key: string, by: number, expiresAtMs: number) =>
      Effect.tryPromise({
        try: () => client.countHit(key, by, expiresAtMs),
        catch: (cause) => new ExternalFailure({ what: "INCRBY", cause })
      })

    const hit = (key: string, expiresAtMs: number) =>
      Effect.gen(function*() {
        const now = yield* Clock.currentTimeMillis
        if (retryAtMs > now) return fallback.hit(key, expiresAtMs, yield* replicas, now)
        const probing = retryAtMs !== 0
        // While this request tries Redis again, the others keep counting in memory.
        if (probing) retryAtMs = now + retryAfterMs
        const pending = fallback.pending(key, now)
        return yield* incrementInRedis(key, 1 + pending, expiresAtMs).pipe(
          Effect.tap((count) =>
            Effect.suspend(() => {
              fallback.shared(key, expiresAtMs, count, pending, now)
              if (!probing || retryAtMs === 0) return Effect.void
              retryAtMs = 0
              return Effect.logInfo("Redis is back; rate limits are shared again")
            })
          ),
          Effect.catchAll((error) =>
            Effect.gen(function*() {
              if (retryAtMs === 0) {
                yield* Effect.logWarning(
                  `Redis unreachable (${error.detail}); counting rate limits in memory on this replica, its share of each limit, until it returns`
                )
              }
              retryAtMs = now + retryAfterMs
              return fallback.hit(key, expiresAtMs, yield* replicas, now)
            })
          )
        )
      })

    const state = Effect.sync(() => (retryAtMs === 0 ? "redis" as const : "memory_fallback" as const))
    return RateLimitStore.of({ hit, state })
  })

export const RedisRateLimitStoreLive = (url: string) => Layer.scoped(RateLimitStore, makeRedisRateLimitStore(url))
