import { Effect } from "effect"

/**
 * Statements of one transaction sent together: each is started at once, so on the
 * transaction's connection (pipelined, Layers/Database.ts) they go out in one write and are
 * answered in one round trip, in the order given. Every statement runs to its answer even
 * when another fails (one already on the wire cannot be taken back, and interrupting it
 * would send a cancel that may land on the connection's next user); then the values, in
 * order, or the first failure.
 */
export const sentTogether = <const T extends ReadonlyArray<Effect.Effect<any, any, any>>>(
  statements: T
): Effect.Effect<
  { -readonly [K in keyof T]: Effect.Effect.Success<T[K]> },
  Effect.Effect.Error<T[number]>,
  Effect.Effect.Context<T[number]>
> =>
  Effect.flatMap(
    Effect.all(statements.map((statement) => Effect.exit(statement)), { concurrency: "unbounded" }),
    (exits) => Effect.all(exits)
  ) as any
