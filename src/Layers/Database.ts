import { PgClient } from "@effect/sql-pg"
import { SqlError } from "@effect/sql/SqlError"
import { PGlite } from "@electric-sql/pglite"
import { PGLiteSocketServer } from "@electric-sql/pglite-socket"
import { Config, Duration, Effect, Layer, Option, Redacted } from "effect"
import * as fs from "node:fs"
import * as path from "node:path"
import pg from "pg"
import { holdEmbeddedLock } from "./EmbeddedLock.js"
import { CountingClient, PreparingClient } from "./PreparedStatements.js"

/**
 * The SQL client: PostgreSQL at DATABASE_URL, or, when it is unset, embedded PGlite kept
 * under DATA_DIR (default ./.data) and served over one loopback socket. PGlite handles one
 * connection at a time, so the pool is one connection on both sides (see docs/decisions.md),
 * and one process at a time holds the files (EmbeddedLock.ts).
 */
const embeddedPostgres = (dataDir: string) =>
  Effect.acquireRelease(
    Effect.promise(async () => {
      fs.mkdirSync(dataDir, { recursive: true })
      const db = await PGlite.create(path.join(dataDir, "pgdata"))
      const server = new PGLiteSocketServer({ db, host: "127.0.0.1", port: 0, maxConnections: 1 })
      await server.start()
      const [host, port] = server.getServerConn().split(":")
      return { db, server, host: host ?? "127.0.0.1", port: Number(port) }
    }),
    ({ db, server }) =>
      Effect.promise(async () => {
        await server.stop()
        await db.close()
      })
  )

/**
 * The pool for DATABASE_URL, its connections counting the statements they send and sending
 * them prepared unless DATABASE_PREPARED_STATEMENTS is false (PreparedStatements.ts); checked
 * with one query at start, closed with the scope.
 */
const preparingPool = (
  url: Redacted.Redacted<string>,
  max: number,
  acquireTimeout: Duration.Duration,
  prepared: boolean
) =>
  Effect.acquireRelease(
    Effect.gen(function*() {
      const pool = new pg.Pool({
        connectionString: Redacted.value(url),
        max,
        connectionTimeoutMillis: Duration.toMillis(acquireTimeout),
        application_name: "agent-gateway",
        // Statements asked for together are written together (`sentTogether`): one round trip.
        pipeline: true,
        Client: prepared ? PreparingClient : CountingClient
      })
      // A connection that fails while idle is dropped by the pool; the next query reconnects.
      pool.on("error", () => {})
      yield* Effect.tryPromise({
        try: () => pool.query("SELECT 1"),
        catch: (cause) => new SqlError({ cause, message: "PgClient: Failed to connect" })
      }).pipe(
        Effect.timeoutFail({
          duration: acquireTimeout,
          onTimeout: () =>
            new SqlError({ cause: new Error("Connection timed out"), message: "PgClient: Connection timed out" })
        }),
        Effect.tapError(() => Effect.promise(() => pool.end()))
      )
      return pool
    }),
    (pool) => Effect.promise(() => pool.end()).pipe(Effect.timeoutOption(Duration.seconds(1)))
  )

export const DatabaseLive = Layer.unwrapScoped(
  Effect.gen(function*() {
    const url = yield* Config.option(Config.redacted("DATABASE_URL"))
    const poolSize = yield* Config.integer("DATABASE_POOL_SIZE").pipe(Config.withDefault(20))
    // How long a request waits for a free connection before answering 503 (never forever).
    const acquireTimeout = Duration.millis(
      yield* Config.integer("DATABASE_ACQUIRE_TIMEOUT_MS").pipe(Config.withDefault(5000))
    )
    // Off behind a proxy that pools by transaction (named statements live on one connection).
    const prepared = yield* Config.boolean("DATABASE_PREPARED_STATEMENTS").pipe(Config.withDefault(true))
    if (Option.isSome(url)) {
      const pool = yield* preparingPool(url.value, poolSize, acquireTimeout, prepared)
      return PgClient.layerFromPool({ acquire: Effect.succeed(pool) })
    }
    const dataDir = yield* Config.string("DATA_DIR").pipe(Config.withDefault("./.data"))
    fs.mkdirSync(dataDir, { recursive: true })
    yield* holdEmbeddedLock(dataDir)
    const embedded = yield* embeddedPostgres(dataDir)
    yield* Effect.logInfo(`Embedded PostgreSQL (PGlite) at ${path.resolve(dataDir)}`)
    return PgClient.layer({
      host: embedded.host,
      port: embedded.port,
      database: "postgres",
      username: "postgres",
      maxConnections: 1,
      connectTimeout: acquireTimeout,
      applicationName: "agent-gateway"
    })
  })
)
