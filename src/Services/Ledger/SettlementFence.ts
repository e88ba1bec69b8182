import type { Statement } from "@effect/sql"
import { type Brand, Data } from "effect"

/**
 * The fence around the one-statement settlement (`LedgerRepo.settleStatement`). A caller
 * may add writes of its own that commit in the same statement as the settlement (the
 * gateway finishes its call row there, so a call has one statement to settle; a purchase
 * records its item's outcome, finishes its receipt and keeps its key's answer), and a gate
 * that must pass for the settlement to be made at all (a purchase's item still claimed by
 * the runner settling it). The two sides meet only through these types:
 *
 * - `HoldSettled`: the SQL condition "this statement settled the hold". Only the ledger
 *   builds it (inside LedgerRepo); the caller puts it in its writes' WHERE clauses.
 * - `SettlementWrite`: one of the caller's data-modifying statements (an UPDATE, INSERT or
 *   DELETE on the caller's own tables), built by the caller's repository with
 *   `settlementWrite`. It may use the condition and its own parameters only: the
 *   settlement's own names (the CTEs `h`, `s`, `o`, `e` and the names `alongside_0`,
 *   `alongside_1`, ... the writes run under) stay the ledger's.
 * - `SettlementGate`: CTE definitions (`steps`, placed first, so they may lock the caller's
 *   rows before the hold's) and a condition on them (`passed`); built with
 *   `settlementGate`. A settlement whose gate did not pass changes nothing and fails with
 *   `SettlementGateClosed`.
 *
 * What the settlement does itself (each tested on its own: test/money/ledger.test.ts, "settleWith"):
 * spend and the 80% budget alert of live agents, the trial's hourly window given back for
 * what was released, the low-balance alert once per top-up, one ledger entry per movement.
 */
export type HoldSettled = Statement.Fragment & Brand.Brand<"Ledger/HoldSettled">

export type SettlementWrite = Statement.Fragment & Brand.Brand<"Ledger/SettlementWrite">

/** Marks a repository's statement as its write alongside a settlement (see the rules above). */
export const settlementWrite = (statement: Statement.Fragment): SettlementWrite => statement as SettlementWrite

export interface SettlementGate {
  readonly steps: Statement.Fragment
  readonly passed: Statement.Fragment
}

/** Marks a repository's CTEs and condition as a settlement's gate (see the rules above). */
export const settlementGate = (gate: SettlementGate): SettlementGate & Brand.Brand<"Ledger/SettlementGate"> =>
  gate as SettlementGate & Brand.Brand<"Ledger/SettlementGate">

/** The settlement's gate did not pass: nothing was settled. */
export class SettlementGateClosed extends Data.TaggedError("SettlementGateClosed") {}
