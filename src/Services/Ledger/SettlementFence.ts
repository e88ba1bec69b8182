import type { Statement } from "@effect/sql"
import type { Brand } from "effect"

/**
 * The fence around the one-statement settlement (`LedgerRepo.settleStatement`). A caller
 * may add one write of its own that commits in the same statement as the settlement (the
 * gateway finishes its call row there, so a call has one statement to settle). The two sides
 * meet only through these types:
 *
 * - `HoldSettled`: the SQL condition "this statement settled the hold". Only the ledger
 *   builds it (inside LedgerRepo); the caller puts it in its write's WHERE clause.
 * - `SettlementWrite`: the caller's data-modifying statement (one UPDATE or INSERT on the
 *   caller's own table), built by the caller's repository with `settlementWrite`. It may use
 *   the condition and its own parameters only: the settlement's own names (the CTEs `h`,
 *   `s`, `o`, `e` and the name `alongside` the write runs under) stay the ledger's.
 *
 * What the settlement does itself (each tested on its own: test/money/ledger.test.ts, "settleWith"):
 * spend and the 80% budget alert of live agents, the trial's hourly window given back for
 * what was released, the low-balance alert once per top-up, one ledger entry per movement.
 */
export type HoldSettled = Statement.Fragment & Brand.Brand<"Ledger/HoldSettled">

export type SettlementWrite = Statement.Fragment & Brand.Brand<"Ledger/SettlementWrite">

/** Marks a repository's statement as its write alongside a settlement (see the rules above). */
export const settlementWrite = (statement: Statement.Fragment): SettlementWrite => statement as SettlementWrite
