import { Config, Effect, Schedule } from "effect"
import type { Redis } from "ioredis"
import { randomUUID } from "node:crypto"

/**
 * How many replicas share the Redis counters, for dividing a limit while Redis is
 * unreachable. Each replica (each process) records a heartbeat in one sorted set, scored
 * by Redis's own clock, every RATE_LIMIT_HEARTBEAT_MS; entries three beats old are dropped
 * and the rest counted. The count seen at the last beat before an outage is what the
 * replica divides by, never less than RATE_LIMIT_REPLICAS (for a replica that starts while
 * Redis is away). A replica that stops removes its entry.
 */
const REPLICAS_KEY = "rl:replicas"

// Redis's clock scores every entry, so replicas whose clocks differ still agree on what is stale.
const BEAT = `
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
redis.call('ZADD', KEYS[1], now, ARGV[1])
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', now - tonumber(ARGV[2]))
redis.call('PEXPIRE', KEYS[1], ARGV[2])
return redis.call('ZCARD', KEYS[1])`

export const replicaHeartbeat = (client: Redis, commandTimeoutMs: number) =>
  Effect.gen(function*() {
    const least = yield* Config.integer("RATE_LIMIT_REPLICAS").pipe(
      Config.withDefault(1),
      Config.validate({ message: "RATE_LIMIT_REPLICAS must be at least 1", validation: (n) => n >= 1 })
    )
    const everyMs = yield* Config.integer("RATE_LIMIT_HEARTBEAT_MS").pipe(Config.withDefault(5000))
    const id = randomUUID()
    let seen = 1
    const beat = Effect.tryPromise(() => client.eval(BEAT, 1, REPLICAS_KEY, id, String(everyMs * 3))).pipe(
      Effect.timeout(commandTimeoutMs),
      Effect.tap((count) =>
        Effect.sync(() => {
          seen = Math.max(1, Number(count))
        })
      ),
      // Redis away: the count seen before stands.
      Effect.ignore
    )
    yield* beat
    yield* Effect.forkScoped(Effect.repeat(beat, Schedule.spaced(everyMs)))
    yield* Effect.addFinalizer(() =>
      Effect.tryPromise(() => client.zrem(REPLICAS_KEY, id)).pipe(Effect.timeout(commandTimeoutMs), Effect.ignore)
    )
    /** The replicas to divide a limit among now. */
    return Effect.sync(() => Math.max(least, seen))
  })
