import type { SqlClient, Statement } from "@effect/sql"
import { type Brand, Effect } from "effect"

/**
 * The fence around a hold made in one statement with the caller's own work
 * (`Ledger.holdWith`, `Ledger.holdManyWith`): the gateway counts a call against its daily
 * limits, takes budget and balance, and writes its pending call row in one round trip; a
 * purchase checks its idempotency key, holds its items, and writes the key, the receipt
 * and the items in one. The two sides meet only through these types:
 *
 * - `HoldGate`: the caller's checks that must pass before anything is held. `steps` are
 *   CTE definitions (`name AS (...)`, comma-separated) placed first in the statement;
 *   `passed` is a relation of those steps with one row when every check passed (the budget
 *   is taken only then); `report` is one JSON value saying what the steps did, handed back
 *   to `judge`, which fails with the caller's error when a check refused (having undone
 *   whatever part of its own counting went through). `undo` takes back what the steps
 *   counted when the ledger then refused the hold. Built by the caller's repository with
 *   `holdGate`; the hold's own names (the CTEs `s`, `d`, `h`, `e` and `recorded_0`,
 *   `recorded_1`, ...) stay the ledger's.
 * - `HoldTaken`: the relation "the holds this statement took", one row with its `id` per
 *   hold when the budget and the balance gave the amount. Only the ledger builds it.
 * - `HoldRecord`: one of the caller's INSERTs selecting from `HoldTaken` (or conditional on
 *   a row in it), so its rows exist exactly when the holds do (built with `holdRecord`).
 */
export type HoldGateFragment = Statement.Fragment & Brand.Brand<"Ledger/HoldGateFragment">

export interface HoldGate<E> {
  readonly steps: HoldGateFragment
  readonly passed: HoldGateFragment
  readonly report: HoldGateFragment
  readonly judge: (report: unknown) => Effect.Effect<void, E>
  readonly undo: Effect.Effect<void>
}

export type HoldTaken = Statement.Fragment & Brand.Brand<"Ledger/HoldTaken">

export type HoldRecord = Statement.Fragment & Brand.Brand<"Ledger/HoldRecord">

/** Marks a repository's CTEs, relation and report as a hold's gate (see the rules above). */
export const holdGate = <E>(gate: {
  readonly steps: Statement.Fragment
  readonly passed: Statement.Fragment
  readonly report: Statement.Fragment
  readonly judge: (report: unknown) => Effect.Effect<void, E>
  readonly undo: Effect.Effect<void>
}): HoldGate<E> => gate as HoldGate<E>

/** Marks a repository's INSERT as the record written with a hold (see the rules above). */
export const holdRecord = (statement: Statement.Fragment): HoldRecord => statement as HoldRecord

/**
 * Two gates in one: `second`'s steps run only when `first` passed (it gets `first.passed`
 * to select from), and `first` is judged first, so a refusal of `first` is never taken
 * for one of `second`'s. Undoing undoes both.
 */
export const gateThen = <E1, E2>(
  sql: SqlClient.SqlClient,
  first: HoldGate<E1>,
  second: (after: HoldGateFragment) => HoldGate<E2>
): HoldGate<E1 | E2> => {
  const next = second(first.passed)
  return holdGate({
    steps: sql`${first.steps}, ${next.steps}`,
    passed: next.passed,
    report: sql`json_build_array(${first.report}, ${next.report})`,
    judge: (report) => {
      const [a, b] = report as [unknown, unknown]
      return Effect.zipRight(first.judge(a), next.judge(b))
    },
    undo: Effect.zipRight(next.undo, first.undo)
  })
}
