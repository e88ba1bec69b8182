import { expect } from "vitest"
import type { TestDatabase } from "./database.js"

/** The ledger's invariants, read straight from a test database. */

/** The money invariants of one org. */
export const invariants = async (db: TestDatabase, orgId: string) => {
  const [balance] = await db.query(`SELECT balance FROM org_balances WHERE org_id = $1`, [orgId])
  const [sum] = await db.query(`SELECT COALESCE(SUM(amount), 0) AS sum FROM ledger_entries WHERE org_id = $1`, [orgId])
  const [open] = await db.query(
    `SELECT count(*)::int AS n, COALESCE(SUM(amount), 0) AS held FROM ledger_holds WHERE org_id = $1 AND status = 'held'`,
    [orgId]
  )
  const [negative] = await db.query(
    `SELECT count(*)::int AS n FROM agent_month_spend WHERE org_id = $1 AND (spent < 0 OR held < 0)`,
    [orgId]
  )
  // Each hold's entries: -amount at hold, +released at settlement.
  const [mismatched] = await db.query(
    `SELECT count(*)::int AS n FROM ledger_holds h
     WHERE h.org_id = $1 AND NOT h.test_mode AND h.status <> 'held' AND
       (SELECT COALESCE(SUM(e.amount), 0) FROM ledger_entries e WHERE e.hold_id = h.id AND e.kind IN ('hold', 'release'))
         <> -h.captured`,
    [orgId]
  )
  return {
    balance: BigInt(balance?.balance ?? 0),
    entriesSum: BigInt(sum!.sum),
    openHolds: open!.n as number,
    negativeBudgets: negative!.n as number,
    mismatchedHolds: mismatched!.n as number
  }
}

/** The ledger invariant for every org of the database: the sum of its entries is its balance. */
export const expectLedgerInvariant = async (db: TestDatabase) => {
  const rows = await db.query<{ org_id: string; balance: string; sum: string }>(
    `SELECT b.org_id, b.balance::text,
            COALESCE((SELECT SUM(e.amount) FROM ledger_entries e WHERE e.org_id = b.org_id), 0)::text AS sum
     FROM org_balances b`
  )
  for (const row of rows) expect(row.sum, `org ${row.org_id}`).toBe(row.balance)
  return rows.length
}

export const balanceOf = async (db: TestDatabase, orgId: string) => {
  const [row] = await db.query(`SELECT balance::text FROM org_balances WHERE org_id = $1`, [orgId])
  return BigInt(row?.balance ?? "0")
}
