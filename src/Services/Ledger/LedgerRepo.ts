import { SqlClient, SqlSchema, type Statement } from "@effect/sql"
import { Effect, Option, Schema } from "effect"
import { randomUUID } from "node:crypto"
import { HoldId, LedgerEntryId, OrgId } from "../../Domain/Ids.js"
import { LedgerEntry, LedgerHold } from "../../Domain/LedgerRecords.js"
import { directStatements } from "../DirectStatements.js"
import { statementRows } from "../StatementRows.js"
import { namedSteps } from "../StatementSteps.js"
import type { HoldGate, HoldRecord, HoldTaken } from "./HoldFence.js"
import type { HoldSettled, SettlementGate, SettlementWrite } from "./SettlementFence.js"

/**
 * The ledger's SQL. Every statement that can refuse is one conditional write (`... WHERE
 * <rule holds> RETURNING`), so the rule and the change are atomic; callers run these in
 * one transaction and diagnose an empty answer afterwards.
 *
 * Lock order, the same in every transaction that touches several rows: hold row, then
 * the agent's month row, then the org's balance row. Statements on rows nobody contends
 * for (inserts) run first, so the hot rows stay locked as briefly as possible.
 */
/** Balance, trial and outcome rows are decoded by these schemas: credits as bigint, timestamps as Dates. */
export const BalanceRow = Schema.Struct({
  balance: Schema.BigInt,
  frozen: Schema.Boolean,
  funded: Schema.Boolean,
  low_alert_armed: Schema.Boolean,
  low_balance_credits: Schema.BigInt,
  trial_window_start: Schema.NullOr(Schema.DateFromSelf),
  trial_window_spent: Schema.BigInt
})
export type BalanceRow = typeof BalanceRow.Type

export const TrialGrantRow = Schema.Struct({
  id: Schema.String,
  org_id: OrgId,
  credits: Schema.BigInt,
  granted_at: Schema.DateFromSelf,
  expires_at: Schema.DateFromSelf,
  expiring_notified_at: Schema.NullOr(Schema.DateFromSelf),
  expired_at: Schema.NullOr(Schema.DateFromSelf)
})
export type TrialGrantRow = typeof TrialGrantRow.Type

/**
 * One or more holds of one agent, made together (all or none): `amount` each, one per
 * entry of `holds`. The checks apply to their sum.
 */
export interface HoldInput {
  readonly holds: ReadonlyArray<{ readonly id: string; readonly reference: string }>
  readonly orgId: string
  readonly agentId: string
  readonly amount: bigint
  readonly purpose: string
  readonly budgetApproved: boolean
  readonly month: string
  readonly hourStart: Date
  readonly trialLimit: bigint
  readonly createdAt: Date
  readonly expiresAt: Date
}

export const HoldOutcome = Schema.Struct({
  held: Schema.Number,
  budget_taken: Schema.Number,
  has_balance: Schema.Number,
  not_frozen: Schema.Boolean,
  covered: Schema.Boolean,
  trial_ok: Schema.Boolean
})
export type HoldOutcome = typeof HoldOutcome.Type

/** What a caller adds to a hold's statement (HoldFence.ts): its gate, if any, and its records. */
export interface HoldCaller {
  readonly gate?: HoldGate<unknown> | undefined
  readonly records: (taken: HoldTaken) => ReadonlyArray<HoldRecord>
}

/** A hold made with the caller's gate: the gate's own report besides (see HoldFence.ts). */
export const GatedHoldOutcome = Schema.Struct({ ...HoldOutcome.fields, gate: Schema.Unknown })
export type GatedHoldOutcome = typeof GatedHoldOutcome.Type

export const SettleOutcome = Schema.Struct({
  org_id: Schema.String,
  agent_id: Schema.String,
  amount: Schema.BigInt,
  /** A test-mode or refused hold: no credits moved. */
  no_credits: Schema.Boolean,
  month: Schema.String,
  spent: Schema.NullOr(Schema.BigInt),
  alerted_80pct: Schema.NullOr(Schema.Boolean),
  budget: Schema.NullOr(Schema.BigInt),
  agent_name: Schema.NullOr(Schema.String),
  agent_mode: Schema.NullOr(Schema.Literal("test", "live")),
  /** The balance after the settlement, when the org's row was written. */
  balance: Schema.NullOr(Schema.BigInt),
  /** This settlement took the balance under the org's armed alert (and disarmed it). */
  low_alert_fired: Schema.Boolean,
  /** This charge took a live agent's month to 80% of its budget, not yet alerted. */
  budget_alert_due: Schema.Boolean,
  entries: Schema.Number
})
export type SettleOutcome = typeof SettleOutcome.Type

const Balance = Schema.Struct({ balance: Schema.BigInt })
const Id = Schema.Struct({ id: Schema.String })
const HoldIdRow = Schema.Struct({ id: HoldId })
const HoldAt = Schema.Struct({ holdId: Schema.String, now: Schema.DateFromSelf })
const DueAt = Schema.Struct({ now: Schema.DateFromSelf, limit: Schema.Number })

const holdColumns = `id, org_id, agent_id, amount, purpose, reference, test_mode, to_char(month, 'YYYY-MM-DD') AS month,
  status, captured, refunded, created_at, expires_at`

export class LedgerRepo extends Effect.Service<LedgerRepo>()("Ledger/LedgerRepo", {
  effect: Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    // A hold and a settlement are the hot path's statements: run on the pool directly.
    const direct = yield* directStatements
    const gatedHoldOutcomeRows = statementRows(GatedHoldOutcome, direct)
    const gatedHeldRows = statementRows(Schema.Struct({ held: Schema.Number, gate: Schema.Unknown }), direct)
    const settleOutcomeRows = statementRows(SettleOutcome, direct)
    const balanceRowRows = statementRows(BalanceRow)
    const balanceRows = statementRows(Balance)
    const holdCols = sql.unsafe(holdColumns)

    /** What holds made together take from the budget and the balance: their sum. */
    const totalOf = (hold: HoldInput) => (hold.amount * BigInt(hold.holds.length)).toString()

    /**
     * The ids and references of holds made together, as a relation `u (id, reference)`: one
     * hold (every gateway call) as plain parameters, several as two arrays.
     */
    const holdRowsOf = (hold: HoldInput) =>
      hold.holds.length === 1
        ? sql`(VALUES (${hold.holds[0]!.id}::uuid, ${hold.holds[0]!.reference}::text)) AS u (id, reference)`
        : sql`unnest(${hold.holds.map((h) => h.id)}::uuid[], ${hold.holds.map((h) => h.reference)}::text[])
                AS u (id, reference)`

    const writeEntries = SqlSchema.void({
      Request: Schema.Array(LedgerEntry.insert),
      execute: (entries) => sql`INSERT INTO ledger_entries ${sql.insert(entries)}`
    })
    /** Appends entries (each with a new id), outside the hold and settlement statements. */
    const insertEntries = (entries: ReadonlyArray<Omit<typeof LedgerEntry.insert.Type, "id">>) =>
      entries.length === 0
        ? Effect.void
        : writeEntries(entries.map((entry) => ({ ...entry, id: LedgerEntryId.make(randomUUID()) }))).pipe(Effect.orDie)

    /**
     * The budget part of a hold: the agent's month row takes the amount (a conditional
     * upsert) if it stays within the monthly budget, or always when the budget was approved.
     */
    const takeBudget = (hold: HoldInput, gatePassed: Statement.Fragment = sql`true`) => {
      const amount = totalOf(hold)
      return sql`
          INSERT INTO agent_month_spend AS s (agent_id, month, org_id, spent, held)
          SELECT a.id, ${hold.month}, a.org_id, 0, ${amount}
          FROM agents a
          WHERE a.id = ${hold.agentId} AND (${hold.budgetApproved} OR ${amount}::bigint <= a.monthly_budget_credits)
            AND ${gatePassed}
          ON CONFLICT (agent_id, month) DO UPDATE SET held = s.held + excluded.held
          WHERE ${hold.budgetApproved}
             OR s.spent + s.held + excluded.held <= (SELECT monthly_budget_credits FROM agents WHERE id = excluded.agent_id)
          RETURNING 1 AS ok`
    }

    /**
     * A live hold in one statement (one round trip, atomic on its own). Lock order: the
     * agent's month row (a conditional upsert takes the amount if it stays within the
     * budget), then the org's balance row (one conditional `UPDATE ... WHERE balance >=
     * amount`, also checking frozen and the trial's hourly window, run only if the budget
     * took the amount). The hold row is written whenever the budget took the amount: with
     * its `hold` entry when the balance gave it, else as `refused` (budget only), which
     * the caller releases at once. The flags after the outcome are a plain read of the org's
     * row as the statement began (one lookup), used only to say which check refused.
     */
    /**
     * With the caller's gate and records in the same statement (HoldFence.ts): the gate's
     * steps run first and the budget is taken only when they passed; the records are written
     * only when the hold took the credits.
     */
    const holdLive = (hold: HoldInput, caller: HoldCaller) =>
      gatedHoldOutcomeRows.single(holdLiveStatement(hold, caller)).pipe(Effect.orDie)

    /** The caller's gate steps (first in the statement) and the condition they passed. */
    const gateOf = (caller: HoldCaller) =>
      caller.gate === undefined
        ? { steps: sql``, passed: sql`true`, report: sql`null` }
        : {
          steps: sql`${caller.gate.steps},`,
          passed: sql`EXISTS (SELECT 1 FROM ${caller.gate.passed})`,
          report: caller.gate.report
        }

    /** The caller's records as CTEs (`recorded_0`, ...), each selecting from `taken`. */
    const recordsOf = (caller: HoldCaller, taken: Statement.Fragment) =>
      namedSteps(sql, ",", "recorded", caller.records(holdTaken(taken)))

    const holdLiveStatement = (hold: HoldInput, caller: HoldCaller) => {
      const each = hold.amount.toString()
      const amount = totalOf(hold)
      const gate = gateOf(caller)
      return sql`
        WITH ${gate.steps}
        s AS (${takeBudget(hold, gate.passed)}),
        d AS (
          UPDATE org_balances SET
            balance = balance - ${amount}::bigint,
            trial_window_start = CASE WHEN funded THEN trial_window_start ELSE ${hold.hourStart}::timestamptz END,
            trial_window_spent = CASE
              WHEN funded THEN trial_window_spent
              WHEN trial_window_start = ${hold.hourStart}::timestamptz THEN trial_window_spent + ${amount}::bigint
              ELSE ${amount}::bigint END,
            updated_at = ${hold.createdAt}
          WHERE org_id = ${hold.orgId} AND NOT frozen AND balance >= ${amount}::bigint
            AND (funded OR (CASE WHEN trial_window_start = ${hold.hourStart}::timestamptz THEN trial_window_spent ELSE 0 END)
                           + ${amount}::bigint <= ${hold.trialLimit}::bigint)
            AND EXISTS (SELECT 1 FROM s)
          RETURNING balance
        ),
        h AS (
          INSERT INTO ledger_holds (id, org_id, agent_id, amount, purpose, reference, test_mode, refused, budget_approved,
                                    month, status, created_at, expires_at)
          SELECT u.id, ${hold.orgId}, ${hold.agentId}, ${each}, ${hold.purpose}, u.reference, false,
                 NOT EXISTS (SELECT 1 FROM d), ${hold.budgetApproved}, ${hold.month}, 'held', ${hold.createdAt},
                 ${hold.expiresAt}
          FROM s, ${holdRowsOf(hold)}
          RETURNING id, refused
        ),
        e AS (
          INSERT INTO ledger_entries (id, org_id, kind, amount, credits, hold_id, agent_id, note, created_at)
          SELECT gen_random_uuid(), ${hold.orgId}, 'hold', -${each}::bigint, ${each}, h.id, ${hold.agentId},
                 ${hold.purpose}, ${hold.createdAt}
          FROM h WHERE NOT h.refused
          RETURNING 1
        )${recordsOf(caller, sql`(SELECT id FROM h WHERE NOT h.refused)`)}
        SELECT ${gate.report} AS gate,
          (SELECT count(*) FROM e)::int AS held,
          (SELECT count(*) FROM h)::int AS budget_taken,
          (b.org_id IS NOT NULL)::int AS has_balance,
          COALESCE(NOT b.frozen, true) AS not_frozen,
          COALESCE(b.balance >= ${amount}::bigint, false) AS covered,
          COALESCE(b.funded OR (CASE WHEN b.trial_window_start = ${hold.hourStart}::timestamptz
                                     THEN b.trial_window_spent ELSE 0 END) + ${amount}::bigint <= ${hold.trialLimit}::bigint,
                   true) AS trial_ok
        FROM (SELECT 1) AS one LEFT JOIN org_balances b ON b.org_id = ${hold.orgId}`
    }

    /** A test-mode hold: the budget only, in one statement, with the caller's gate and records (as `holdLive`). */
    const holdTest = (hold: HoldInput, caller: HoldCaller) =>
      gatedHeldRows.single(holdTestStatement(hold, caller)).pipe(Effect.orDie)

    const holdTestStatement = (hold: HoldInput, caller: HoldCaller) => {
      const each = hold.amount.toString()
      const gate = gateOf(caller)
      return sql`
        WITH ${gate.steps}
        s AS (${takeBudget(hold, gate.passed)}),
        h AS (
          INSERT INTO ledger_holds (id, org_id, agent_id, amount, purpose, reference, test_mode, budget_approved,
                                    month, status, created_at, expires_at)
          SELECT u.id, ${hold.orgId}, ${hold.agentId}, ${each}, ${hold.purpose}, u.reference, true,
                 ${hold.budgetApproved}, ${hold.month}, 'held', ${hold.createdAt}, ${hold.expiresAt}
          FROM s, ${holdRowsOf(hold)}
          RETURNING id
        )${recordsOf(caller, sql`(SELECT id FROM h)`)}
        SELECT ${gate.report} AS gate, (SELECT count(*) FROM h)::int AS held`
    }

    /**
     * Settles a hold in one statement: the hold is marked (only if still held and covering
     * `captured`), the agent's month row moves it from held to spent, what was not charged
     * goes back to the org's balance, with the capture and release entries. Lock order as
     * in a hold: agent's row, then org's row (the org's update waits on the agent's by
     * reading its result). Empty when the hold could not be settled.
     *
     * The org's row is written only when credits go back or a charge takes the balance
     * under the org's armed low-balance alert (then the alert is disarmed in the same
     * write, so exactly one settlement reports it); a full capture otherwise leaves the
     * hottest row of a busy org alone. The statement's snapshot can miss a crossing made by
     * a hold committed just after it began: that hold's own settlement sees it.
     */
    /** The relation the caller's record selects from: only the hold statement builds it. */
    const holdTaken = (relation: Statement.Fragment) => relation as HoldTaken

    /** The condition the caller's write gets: only this statement settles holds. */
    const settledCondition = (condition: Statement.Fragment) => condition as HoldSettled

    const settleSql = (
      holdId: string,
      captured: bigint,
      now: Date,
      alongside?: (settled: HoldSettled) => SettlementWrite | ReadonlyArray<SettlementWrite>,
      signalEventDue = false,
      gate?: SettlementGate
    ) => {
      const c = captured.toString()
      // A charge that takes a live agent's month to 80% of its budget, not yet alerted.
      const budgetAlertDue = sql`COALESCE(${captured > 0n} AND s.agent_mode = 'live' AND NOT s.alerted_80pct
                                 AND s.budget > 0 AND s.spent * 5 >= s.budget * 4, false)`
      const lowAlertFired = sql`COALESCE((SELECT low_alert_fired FROM o), false)`
      // With `signalEventDue` the statement fails (SQLSTATE LE001, see migration 0007) rather
      // than apply a settlement that causes an event, judged under its own locks.
      const eventDue = signalEventDue
        ? sql`, CASE WHEN ${lowAlertFired} OR ${budgetAlertDue} THEN ledger_event_due() END AS event_due`
        : sql``
      // The hold is found by its key alone: its status is compared as an expression
      // (`status || ''`), which the partial index of open holds cannot serve. On statistics
      // taken before many holds were open, `status = 'held'` made the planner read every
      // open hold to find this one.
      const writes = alongside === undefined ? [] : [alongside(settledCondition(sql`EXISTS (SELECT 1 FROM h)`))].flat()
      return sql`
        WITH ${gate === undefined ? sql`` : sql`${gate.steps},`}
        h AS (
          UPDATE ledger_holds SET status = ${
        captured > 0n ? "captured" : "released"
      }, captured = ${c}, settled_at = ${now}
          WHERE id = ${holdId} AND (status || '') = 'held' AND amount >= ${c}::bigint${
        gate === undefined ? sql`` : sql` AND ${gate.passed}`
      }
          RETURNING id, org_id, agent_id, amount, purpose, test_mode OR refused AS no_credits, month, created_at
        ),
        s AS (
          UPDATE agent_month_spend s SET held = s.held - h.amount, spent = s.spent + ${c}::bigint
          FROM h, agents a
          WHERE s.agent_id = h.agent_id AND s.month = h.month AND a.id = h.agent_id
          RETURNING s.spent, s.alerted_80pct, a.monthly_budget_credits AS budget, a.name AS agent_name, a.mode AS agent_mode
        ),
        o AS (
          UPDATE org_balances b SET
            balance = b.balance + (h.amount - ${c}::bigint),
            trial_window_spent = CASE
              WHEN NOT b.funded AND b.trial_window_start = date_trunc('hour', h.created_at AT TIME ZONE 'UTC') AT TIME ZONE 'UTC'
                THEN GREATEST(b.trial_window_spent - (h.amount - ${c}::bigint), 0)
              ELSE b.trial_window_spent END,
            low_alert_armed = b.low_alert_armed AND NOT (${captured > 0n}
              AND b.balance + (h.amount - ${c}::bigint) < og.low_balance_credits),
            low_alert_fired_by = CASE
              WHEN ${
        captured > 0n
      } AND b.low_alert_armed AND b.balance + (h.amount - ${c}::bigint) < og.low_balance_credits
                THEN h.id
              ELSE b.low_alert_fired_by END,
            updated_at = ${now}
          FROM h, orgs og
          WHERE b.org_id = h.org_id AND og.id = h.org_id AND NOT h.no_credits
            AND (SELECT count(*) FROM s) >= 0
            AND (h.amount > ${c}::bigint
                 OR (${captured > 0n} AND b.low_alert_armed AND b.balance < og.low_balance_credits))
          RETURNING b.balance, b.low_alert_fired_by IS NOT DISTINCT FROM h.id AS low_alert_fired
        ),
        e AS (
          INSERT INTO ledger_entries (id, org_id, kind, amount, credits, hold_id, agent_id, note, created_at)
          SELECT gen_random_uuid(), h.org_id, x.kind, x.amount, x.credits, h.id, h.agent_id, h.purpose, ${now}
          FROM h, LATERAL (VALUES ('capture', 0::bigint, ${c}::bigint),
                                  ('release', h.amount - ${c}::bigint, h.amount - ${c}::bigint)) AS x (kind, amount, credits)
          WHERE NOT h.no_credits AND x.credits > 0
          RETURNING 1
        )${namedSteps(sql, ",", "alongside", writes)}
        SELECT h.org_id, h.agent_id, h.amount::text AS amount, h.no_credits, to_char(h.month, 'YYYY-MM-DD') AS month,
               s.spent::text AS spent, s.alerted_80pct, s.budget::text AS budget, s.agent_name, s.agent_mode,
               (SELECT balance::text FROM o) AS balance, ${lowAlertFired} AS low_alert_fired,
               ${budgetAlertDue} AS budget_alert_due, (SELECT count(*) FROM e)::int AS entries${eventDue}
        FROM h
        LEFT JOIN s ON true`
    }
    const settleStatement = (...args: Parameters<typeof settleSql>) =>
      settleOutcomeRows.one(settleSql(...args)).pipe(Effect.catchTag("ParseError", Effect.die))

    /**
     * Releases holds a hold statement wrote as `refused` (the budget took their amount, the
     * balance did not): their budget goes back in one statement, however many there are. They
     * moved no credits, so there is no entry and no balance to write.
     */
    const releaseRefused = (holdIds: ReadonlyArray<string>, now: Date) =>
      sql`
        WITH h AS (
          UPDATE ledger_holds SET status = 'released', captured = 0, settled_at = ${now}
          WHERE id = ANY(${holdIds as Array<string>}::uuid[]) AND status = 'held' AND refused
          RETURNING agent_id, month, amount
        )
        UPDATE agent_month_spend s SET held = s.held - t.amount
        FROM (SELECT agent_id, month, sum(amount) AS amount FROM h GROUP BY agent_id, month) t
        WHERE s.agent_id = t.agent_id AND s.month = t.month`.pipe(Effect.asVoid, Effect.orDie)

    /** Gives back spend of a refunded purchase. */
    const unspendBudget = (agentId: string, month: string, amount: bigint) =>
      sql`
        UPDATE agent_month_spend SET spent = GREATEST(spent - ${amount.toString()}, 0)
        WHERE agent_id = ${agentId} AND month = ${month}`.pipe(Effect.asVoid, Effect.orDie)

    /** Marks the 80% alert sent for the agent's month; true only for the first caller. */
    const markBudgetAlerted = (agentId: string, month: string) =>
      sql`
        UPDATE agent_month_spend SET alerted_80pct = true
        WHERE agent_id = ${agentId} AND month = ${month} AND NOT alerted_80pct
        RETURNING 1 AS one`.pipe(Effect.map((rows) => rows.length > 0), Effect.orDie)

    const findMonthSpend = SqlSchema.findOne({
      Request: Schema.Struct({ agentId: Schema.String, month: Schema.String }),
      Result: Schema.Struct({ spent: Schema.BigInt, held: Schema.BigInt }),
      execute: ({ agentId, month }) =>
        sql`SELECT spent, held FROM agent_month_spend WHERE agent_id = ${agentId} AND month = ${month}`
    })
    /** What the agent's month has spent and holds. */
    const monthSpend = (agentId: string, month: string) =>
      findMonthSpend({ agentId, month }).pipe(
        Effect.map(Option.match({ onNone: () => 0n, onSome: (row) => row.spent + row.held })),
        Effect.orDie
      )

    /**
     * Puts `amount` back on the balance (a release, a refund, a credit). `trialHour` is the
     * hour the returned credits were held in: they leave the trial window if it is still
     * that hour.
     */
    const creditBalance = (orgId: string, amount: bigint, trialHour: Date | null, now: Date) =>
      balanceRowRows.single(sql`
        UPDATE org_balances b SET
          balance = b.balance + ${amount.toString()},
          trial_window_spent = CASE
            WHEN NOT b.funded AND b.trial_window_start = ${trialHour}::timestamptz
              THEN GREATEST(b.trial_window_spent - ${amount.toString()}, 0)
            ELSE b.trial_window_spent END,
          updated_at = ${now}
        FROM orgs o
        WHERE o.id = b.org_id AND b.org_id = ${orgId}
        RETURNING b.balance, b.frozen, b.funded, b.low_alert_armed, o.low_balance_credits, b.trial_window_start,
                  b.trial_window_spent`).pipe(Effect.orDie)

    /**
     * Adds credits from outside (top-up, adjustment, trial grant), creating the row. The
     * low-balance alert is armed for funded orgs only: before the first top-up the balance
     * is the trial's, and the alert would fire on its first call (docs/decisions.md).
     */
    const addCredits = (orgId: string, amount: bigint, funds: boolean, now: Date) =>
      balanceRows.single(sql`
        INSERT INTO org_balances AS b (org_id, balance, funded, low_alert_armed, updated_at)
        VALUES (${orgId}, ${amount.toString()}, ${funds}, ${funds}, ${now})
        ON CONFLICT (org_id) DO UPDATE SET
          balance = b.balance + excluded.balance,
          funded = b.funded OR excluded.funded,
          low_alert_armed = b.funded OR excluded.funded,
          updated_at = excluded.updated_at
        RETURNING balance`).pipe(Effect.map((row) => row.balance), Effect.orDie)

    const findBalance = SqlSchema.findOne({
      Request: Schema.Struct({ orgId: Schema.String, lock: Schema.Boolean }),
      Result: BalanceRow,
      execute: ({ lock, orgId }) =>
        sql`
          SELECT b.balance, b.frozen, b.funded, b.low_alert_armed, o.low_balance_credits, b.trial_window_start,
                 b.trial_window_spent
          FROM org_balances b JOIN orgs o ON o.id = b.org_id
          WHERE b.org_id = ${orgId}${lock ? sql` FOR UPDATE OF b` : sql``}`
    })
    /** Locks the org's balance row (trial expiry computes what to take back under it). */
    const lockBalance = (orgId: string) => findBalance({ orgId, lock: true }).pipe(Effect.orDie)

    /** Removes credits the caller has checked are there (under `lockBalance`). */
    const removeCredits = (orgId: string, amount: bigint, now: Date) =>
      balanceRows.single(sql`
            UPDATE org_balances SET balance = balance - ${amount.toString()}, updated_at = ${now}
            WHERE org_id = ${orgId}
            RETURNING balance`).pipe(Effect.map((row) => row.balance), Effect.orDie)

    /**
     * Disarms the low-balance alert if it is armed and the balance is under the org's
     * alert; answers the balance for the one caller that disarmed it.
     */
    const disarm = SqlSchema.findOne({
      Request: Schema.String,
      Result: Balance,
      execute: (orgId) =>
        sql`
          UPDATE org_balances b SET low_alert_armed = false
          FROM orgs o
          WHERE o.id = b.org_id AND b.org_id = ${orgId} AND b.low_alert_armed AND b.balance < o.low_balance_credits
          RETURNING b.balance`
    })
    const disarmLowAlert = (orgId: string) =>
      disarm(orgId).pipe(Effect.map(Option.map((row) => row.balance)), Effect.orDie)

    const balanceRow = (orgId: string) => findBalance({ orgId, lock: false }).pipe(Effect.orDie)

    const setFrozen = (orgId: string, frozen: boolean, now: Date) =>
      sql`
        INSERT INTO org_balances AS b (org_id, balance, frozen, updated_at) VALUES (${orgId}, 0, ${frozen}, ${now})
        ON CONFLICT (org_id) DO UPDATE SET frozen = excluded.frozen, updated_at = excluded.updated_at`.pipe(
        Effect.asVoid,
        Effect.orDie
      )

    /** Records a refund of captured credits if the hold has that much left to refund. */
    const refundRow = SqlSchema.findOne({
      Request: Schema.Struct({ holdId: Schema.String, amount: Schema.BigInt }),
      Result: LedgerHold,
      execute: ({ amount, holdId }) =>
        sql`
          UPDATE ledger_holds SET refunded = refunded + ${amount}
          WHERE id = ${holdId} AND status = 'captured' AND captured - refunded >= ${amount}
          RETURNING ${holdCols}`
    })
    const refundHold = (holdId: string, amount: bigint) => refundRow({ holdId, amount }).pipe(Effect.orDie)

    const findHoldRow = SqlSchema.findOne({
      Request: Schema.String,
      Result: LedgerHold,
      execute: (holdId) => sql`SELECT ${holdCols} FROM ledger_holds WHERE id = ${holdId}`
    })
    const findHold = (holdId: string) => findHoldRow(holdId).pipe(Effect.orDie)

    const findExpiredHold = SqlSchema.findOne({
      Request: HoldAt,
      Result: LedgerHold,
      execute: ({ holdId, now }) =>
        sql`
          SELECT ${holdCols} FROM ledger_holds
          WHERE id = ${holdId} AND status = 'held' AND expires_at <= ${now}
          FOR UPDATE SKIP LOCKED`
    })
    /** Locks one expired open hold for the sweeper, skipping holds another replica is on. */
    const lockExpiredHold = (holdId: string, now: Date) => findExpiredHold({ holdId, now }).pipe(Effect.orDie)

    const findExpiredHoldIds = SqlSchema.findAll({
      Request: DueAt,
      Result: HoldIdRow,
      execute: ({ limit, now }) =>
        sql`
          SELECT id FROM ledger_holds WHERE status = 'held' AND expires_at <= ${now}
          ORDER BY expires_at LIMIT ${limit}`
    })
    const expiredHoldIds = (now: Date, limit: number) =>
      findExpiredHoldIds({ now, limit }).pipe(Effect.map((rows) => rows.map((r) => r.id)), Effect.orDie)

    /** Records the org's trial grant; false when it already has one. */
    const insertTrialGrant = (orgId: string, credits: bigint, grantedAt: Date, expiresAt: Date) =>
      sql`
        INSERT INTO trial_grants (id, org_id, credits, granted_at, expires_at)
        VALUES (${randomUUID()}, ${orgId}, ${credits.toString()}, ${grantedAt}, ${expiresAt})
        ON CONFLICT (org_id) DO NOTHING
        RETURNING 1 AS one`.pipe(Effect.map((rows) => rows.length > 0), Effect.orDie)

    const grantColumns = sql`id, org_id, credits, granted_at, expires_at, expiring_notified_at, expired_at`

    const findTrialGrant = SqlSchema.findOne({
      Request: Schema.String,
      Result: TrialGrantRow,
      execute: (orgId) => sql`SELECT ${grantColumns} FROM trial_grants WHERE org_id = ${orgId}`
    })
    const trialGrant = (orgId: string) => findTrialGrant(orgId).pipe(Effect.orDie)

    const findDueTrials = SqlSchema.findAll({
      Request: DueAt,
      Result: Id,
      execute: ({ limit, now }) =>
        sql`
          SELECT id FROM trial_grants WHERE expired_at IS NULL AND expires_at <= ${now}
          ORDER BY expires_at LIMIT ${limit}`
    })
    /** Grants whose credits have run out and were not taken back yet. */
    const dueTrialExpiries = (now: Date, limit: number) =>
      findDueTrials({ now, limit }).pipe(Effect.map((rows) => rows.map((r) => r.id)), Effect.orDie)

    const findDueTrial = SqlSchema.findOne({
      Request: Schema.Struct({ grantId: Schema.String, now: Schema.DateFromSelf }),
      Result: TrialGrantRow,
      execute: ({ grantId, now }) =>
        sql`
          SELECT ${grantColumns}
          FROM trial_grants WHERE id = ${grantId} AND expired_at IS NULL AND expires_at <= ${now}
          FOR UPDATE SKIP LOCKED`
    })
    /** Locks one due grant for expiry, skipping grants another replica is on. */
    const lockDueTrial = (grantId: string, now: Date) => findDueTrial({ grantId, now }).pipe(Effect.orDie)

    const markTrialExpired = (grantId: string, taken: bigint, now: Date) =>
      sql`UPDATE trial_grants SET expired_at = ${now}, expired_credits = ${taken.toString()} WHERE id = ${grantId}`
        .pipe(
          Effect.asVoid,
          Effect.orDie
        )

    /** Credits charged (captures less refunds) since `since`: trial credits are spent first. */
    const sumSpent = SqlSchema.single({
      Request: Schema.Struct({ orgId: Schema.String, since: Schema.DateFromSelf }),
      Result: Schema.Struct({ spent: Schema.BigInt }),
      execute: ({ orgId, since }) =>
        sql`
          SELECT COALESCE(SUM(CASE WHEN kind = 'capture' THEN credits WHEN kind = 'refund' THEN -credits ELSE 0 END), 0)
                 AS spent
          FROM ledger_entries WHERE org_id = ${orgId} AND created_at >= ${since}`
    })
    const spentSince = (orgId: string, since: Date) =>
      sumSpent({ orgId, since }).pipe(Effect.map((row) => row.spent), Effect.orDie)

    /**
     * Claims the one `trial.expiring` notice of grants expiring before `horizon` that still
     * have time left; answers the claimed grants (each claimed once, across replicas).
     */
    const claimNotices = SqlSchema.findAll({
      Request: Schema.Struct({ now: Schema.DateFromSelf, horizon: Schema.DateFromSelf, limit: Schema.Number }),
      Result: TrialGrantRow,
      execute: ({ horizon, limit, now }) =>
        sql`
          UPDATE trial_grants SET expiring_notified_at = ${now}
          WHERE id IN (
            SELECT id FROM trial_grants
            WHERE expiring_notified_at IS NULL AND expired_at IS NULL AND expires_at > ${now} AND expires_at <= ${horizon}
            ORDER BY expires_at LIMIT ${limit}
            FOR UPDATE SKIP LOCKED)
          RETURNING ${grantColumns}`
    })
    const claimExpiringNotices = (now: Date, horizon: Date, limit: number) =>
      claimNotices({ now, horizon, limit }).pipe(Effect.orDie)

    return {
      holdLive,
      holdTest,
      releaseRefused,
      settleStatement,
      settleSql,
      insertEntries,
      unspendBudget,
      markBudgetAlerted,
      monthSpend,
      creditBalance,
      addCredits,
      lockBalance,
      removeCredits,
      disarmLowAlert,
      balanceRow,
      setFrozen,
      refundHold,
      findHold,
      lockExpiredHold,
      expiredHoldIds,
      insertTrialGrant,
      trialGrant,
      dueTrialExpiries,
      lockDueTrial,
      markTrialExpired,
      spentSince,
      claimExpiringNotices
    } as const
  })
}) {}
