import { SqlClient, type Statement } from "@effect/sql"
import { SqlError } from "@effect/sql/SqlError"
import { Context, Effect, FiberRef, Option } from "effect"
import type pg from "pg"

/**
 * The pool behind the SQL client when it is PostgreSQL at DATABASE_URL (Database.ts); absent
 * with embedded PostgreSQL and in tests that build the SQL client themselves.
 */
export class PgPool extends Context.Tag("Database/PgPool")<PgPool, pg.Pool>() {}

/**
 * Runs a statement on the pool directly: its compiled text and parameters sent on a pooled
 * connection, the rows handed back, an error as the SQL client's `SqlError` (same cause). The
 * SQL client's own run wraps every statement in a span and a scope, some 50 µs of CPU a
 * statement even with tracing off; on the hot statements (a gateway call's hold and
 * settlement, a purchase's) that is a few percent of the whole request.
 *
 * Used only where it changes nothing else: with the pool at hand, tracing off (so no span
 * is lost) and outside a transaction (inside one, the statement must go on the
 * transaction's connection: the SQL client's run is used). An interrupted statement is
 * cancelled on the server, as the SQL client does.
 */
export const directStatements = Effect.map(
  Effect.serviceOption(PgPool),
  (pool) => <A>(statement: Statement.Statement<A>): Effect.Effect<ReadonlyArray<A>, SqlError> =>
    Option.isNone(pool) ?
      statement :
      Effect.withFiberRuntime((fiber) =>
        !fiber.getFiberRef(FiberRef.currentTracerEnabled) &&
          Option.isNone(Context.getOption(fiber.currentContext, SqlClient.TransactionConnection))
          ? onPool<A>(pool.value, statement)
          : statement
      )
)

const onPool = <A>(pool: pg.Pool, statement: Statement.Statement<A>) =>
  Effect.async<ReadonlyArray<A>, SqlError>((resume) => {
    const [text, params] = statement.compile()
    // The server process running the statement, for a cancel (`pg` sets it, its types omit it).
    let processId: number | undefined
    let done = false
    pool.connect((connectError, connected, release) => {
      if (connectError !== undefined && connectError !== null) {
        done = true
        return resume(Effect.fail(new SqlError({ cause: connectError, message: "Failed to acquire connection" })))
      }
      if (done || connected === undefined) return release()
      processId = (connected as pg.PoolClient & { readonly processID?: number }).processID
      // A checked-out connection has no listener of its own: a connection that breaks is
      // noted here and handed back to the pool as broken (the pool then drops it).
      let broken: Error | undefined
      const onError = (error: Error) => (broken = error)
      connected.on("error", onError)
      connected.query(text, params as Array<unknown>, (error: Error | null, result: pg.QueryResult) => {
        done = true
        connected.off("error", onError)
        release(broken)
        resume(
          error === null || error === undefined
            ? Effect.succeed(result.rows as Array<A>)
            : Effect.fail(new SqlError({ cause: error, message: "Failed to execute statement" }))
        )
      })
    })
    // Interrupted: nothing more is read; a statement still running is cancelled (best effort).
    return Effect.suspend(() => {
      if (done) return Effect.void
      done = true
      if (processId === undefined || pool.ending) return Effect.void
      return Effect.async<void>((cancelled) => {
        pool.query("SELECT pg_cancel_backend($1)", [processId], () => cancelled(Effect.void))
      }).pipe(Effect.timeoutOption(5000), Effect.asVoid)
    })
  })
