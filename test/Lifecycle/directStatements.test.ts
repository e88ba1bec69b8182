import { SqlClient } from "@effect/sql"
import { PgClient } from "@effect/sql-pg"
import { Cause, Effect, Fiber, Layer, Tracer } from "effect"
import pg from "pg"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { responseForCause } from "../../src/Http/Middleware/ErrorResponses.js"
import { directStatements, PgPool } from "../../src/Services/DirectStatements.js"
import { createTestDatabase, type TestDatabase } from "../support/database.js"
import { eventually } from "../support/world.js"

/**
 * The hot statements' runner (Services/DirectStatements.ts): on the pool directly outside a
 * transaction with tracing off, through the SQL client otherwise, and in both cases the same
 * rows, the same errors, the transaction's connection inside a transaction, and a cancel
 * of a statement whose fiber is interrupted.
 */
let db: TestDatabase
let pool: pg.Pool
// Statements the pool's connections were given: the direct runner's go straight to them.
let onPool = 0

class CountingPoolClient extends pg.Client {
  override query(config: unknown, values?: unknown, callback?: unknown): any {
    onPool++
    return (super.query as Function)(config, values, callback)
  }
}

beforeAll(async () => {
  db = await createTestDatabase("direct_statements")
  pool = new pg.Pool({ connectionString: db.url, max: 3, Client: CountingPoolClient })
  await pool.query("CREATE TABLE direct_things (id int PRIMARY KEY, note text NOT NULL)")
})
afterAll(async () => {
  await pool?.end()
  await db?.drop()
})

const withPool = () =>
  Layer.merge(PgClient.layerFromPool({ acquire: Effect.sync(() => pool) }), Layer.succeed(PgPool, pool))

const run = <A, E>(
  effect: Effect.Effect<A, E, SqlClient.SqlClient>,
  layer: Layer.Layer<SqlClient.SqlClient, unknown> = withPool()
) => Effect.runPromise(effect.pipe(Effect.provide(layer), Effect.withTracerEnabled(false)))

const sleepingStatements = async () =>
  (await pool.query(
    `SELECT count(*)::int AS n FROM pg_stat_activity WHERE query LIKE 'SELECT pg_sleep(%' AND state = 'active'`
  )).rows[0].n as number

describe("direct statements", () => {
  it("run on the pool outside a transaction, with the rows the SQL client gives", async () => {
    const rows = await run(Effect.gen(function*() {
      const sql = yield* SqlClient.SqlClient
      const direct = yield* directStatements
      const before = onPool
      const rows = yield* direct(sql<{ n: number; s: string }>`SELECT ${41}::int + 1 AS n, ${"x"}::text AS s`)
      expect(onPool - before).toBe(1)
      return rows
    }))
    expect(rows).toEqual([{ n: 42, s: "x" }])
  })

  it("fail with the SQL client's SqlError, its cause the server's error", async () => {
    await pool.query("INSERT INTO direct_things VALUES (1, 'one') ON CONFLICT DO NOTHING")
    const error = await run(Effect.gen(function*() {
      const sql = yield* SqlClient.SqlClient
      const direct = yield* directStatements
      return yield* Effect.flip(direct(sql`INSERT INTO direct_things VALUES (${1}, ${"again"})`))
    }))
    expect(error._tag).toBe("SqlError")
    expect((error.cause as { code?: string }).code).toBe("23505")
  })

  it("fail with the pool's timeout when no connection comes free, which the edge answers 503", async () => {
    const small = new pg.Pool({ connectionString: db.url, max: 1, connectionTimeoutMillis: 200 })
    const held = await small.connect()
    try {
      const error = await run(
        Effect.gen(function*() {
          const sql = yield* SqlClient.SqlClient
          const direct = yield* directStatements
          return yield* Effect.flip(direct(sql`SELECT ${1}::int AS one`))
        }),
        Layer.merge(PgClient.layerFromPool({ acquire: Effect.sync(() => small) }), Layer.succeed(PgPool, small))
      )
      expect(error._tag).toBe("SqlError")
      const response = await Effect.runPromise(responseForCause("http://127.0.0.1", Cause.die(error)))
      expect(response.status).toBe(503)
    } finally {
      held.release()
      await small.end()
    }
  })

  it("inside a transaction run on the transaction's connection: a rollback undoes them", async () => {
    const seen = await run(Effect.gen(function*() {
      const sql = yield* SqlClient.SqlClient
      const direct = yield* directStatements
      const inside = yield* sql.withTransaction(Effect.gen(function*() {
        yield* direct(sql`INSERT INTO direct_things VALUES (${2}, ${"two"})`)
        // Read back on the same connection: visible before the commit.
        const rows = yield* direct(sql<{ n: number }>`SELECT count(*)::int AS n FROM direct_things WHERE id = ${2}`)
        return yield* Effect.fail({ rolledBack: rows[0]!.n })
      })).pipe(Effect.flip)
      const after = yield* direct(sql<{ n: number }>`SELECT count(*)::int AS n FROM direct_things WHERE id = ${2}`)
      return { inside, after: after[0]!.n }
    }))
    expect(seen).toEqual({ inside: { rolledBack: 1 }, after: 0 })
  })

  it("with tracing on are the SQL client's, so no statement's span is lost", async () => {
    const spans: Array<string> = []
    const names = await Effect.runPromise(
      Effect.gen(function*() {
        const native = yield* Effect.tracer
        const recording = Tracer.make({
          span: (name, ...rest) => {
            spans.push(name)
            return native.span(name, ...rest)
          },
          context: native.context
        })
        const sql = yield* SqlClient.SqlClient
        const direct = yield* directStatements
        yield* direct(sql`SELECT ${1}::int AS n`).pipe(Effect.withTracer(recording))
        return spans
      }).pipe(Effect.provide(withPool()), Effect.withTracerEnabled(true))
    )
    expect(names).toEqual(["sql.execute"])
  })

  it("without the pool (embedded PostgreSQL, tests' own clients) are the SQL client's", async () => {
    const clientOnly = PgClient.layerFromPool({ acquire: Effect.sync(() => pool) })
    const rows = await run(
      Effect.gen(function*() {
        const sql = yield* SqlClient.SqlClient
        const direct = yield* directStatements
        return yield* direct(sql<{ n: number }>`SELECT ${7}::int AS n`)
      }),
      clientOnly
    )
    expect(rows).toEqual([{ n: 7 }])
  })

  it("cancel a running statement on the server when the fiber is interrupted", async () => {
    const started = Date.now()
    await run(Effect.gen(function*() {
      const sql = yield* SqlClient.SqlClient
      const direct = yield* directStatements
      const fiber = yield* Effect.fork(direct(sql`SELECT pg_sleep(${30}), ${"direct-sleep"}::text`))
      // It runs on the server before the fiber is interrupted.
      yield* Effect.promise(() =>
        eventually(async () => (await sleepingStatements()) === 1, { what: "the statement to run" })
      )
      yield* Fiber.interrupt(fiber)
    }))
    expect(Date.now() - started).toBeLessThan(10_000)
    // The server no longer runs it, and the connection went back to the pool in working order.
    await eventually(async () => (await sleepingStatements()) === 0, {
      timeoutMs: 5_000,
      intervalMs: 100,
      what: "the statement to stop"
    })
    expect((await pool.query("SELECT 1 AS one")).rows).toEqual([{ one: 1 }])
  })
})
