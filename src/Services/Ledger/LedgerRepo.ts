import { SqlClient, SqlSchema } from "@effect/sql"
import { Effect, Option, Schema } from "effect"
import { randomUUID } from "node:crypto"
import { AgentId, HoldId, LedgerEntryId, OrgId } from "../../Domain/Ids.js"
import { AgentMonthSpend, LedgerEntry, LedgerHold, OrgBalance } from "../../Domain/LedgerRecords.js"

/**
 * The ledger's SQL. Holds and settlements are the database's functions `ledger_hold` and
 * `ledger_settle` (migration 0022): every request of a batch is checked and applied one by
 * one under the rows' locks, taken first in one order (holds, agents' months, orgs'
 * balances), so one call makes any number of them exactly as one by one would. The other
 * statements (credits, refunds, trials, the sweeper's reads) run in the ledger's
 * transactions, in the same lock order.
 */

/** An org's balance with its org's low-balance threshold, as the ledger's rules read it. */
export const BalanceRow = Schema.Struct({
  ...OrgBalance.fields,
  low_balance_credits: Schema.BigInt
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

/** One request of a batch of holds: `amount` each, one hold per entry of `holds`, all or none. */
export const HoldRequestRow = Schema.Struct({
  org_id: OrgId,
  agent_id: AgentId,
  amount: Schema.BigInt,
  month: Schema.String,
  approved: Schema.Boolean,
  test: Schema.Boolean,
  purpose: Schema.String,
  expires_at: Schema.DateFromSelf,
  holds: Schema.Array(Schema.Struct({ id: HoldId, reference: Schema.String }))
})
export type HoldRequestRow = typeof HoldRequestRow.Type

/** What `ledger_hold` answers of each request, by its index. */
export const HoldOutcome = Schema.Struct({
  idx: Schema.Number,
  outcome: Schema.Literal("held", "credits_frozen", "over_budget", "insufficient_credits", "trial_limit")
})
export type HoldOutcome = typeof HoldOutcome.Type

/**
 * What `ledger_settle` answers: each hold it settled, and each alert it marked (an agent's
 * month at 80% of its budget, an org's balance under its alert).
 */
export const SettleOutcome = Schema.Union(
  Schema.Struct({
    kind: Schema.Literal("settled"),
    hold_id: HoldId,
    org_id: OrgId,
    agent_id: AgentId,
    amount: Schema.BigInt
  }),
  Schema.Struct({
    kind: Schema.Literal("budget_reached"),
    org_id: OrgId,
    agent_id: AgentId,
    agent_name: Schema.String,
    month: Schema.String,
    spent: Schema.BigInt,
    budget: Schema.BigInt
  }),
  Schema.Struct({ kind: Schema.Literal("balance_low"), org_id: OrgId, balance: Schema.BigInt })
)
export type SettleOutcome = typeof SettleOutcome.Type

const Balance = Schema.Struct({ balance: Schema.BigInt })
const Id = Schema.Struct({ id: Schema.String })
const HoldIdRow = Schema.Struct({ id: HoldId })
const HoldAt = Schema.Struct({ holdId: HoldId, now: Schema.DateFromSelf })
const DueAt = Schema.Struct({ now: Schema.DateFromSelf, limit: Schema.Number })

/** Bigints and Dates as JSON text for the functions' `jsonb` argument (one parameter for a whole batch). */
const asJson = (value: unknown) => JSON.stringify(value, (_, v) => (typeof v === "bigint" ? v.toString() : v))

const holdColumns = `id, org_id, agent_id, amount, purpose, reference, test_mode, to_char(month, 'YYYY-MM-DD') AS month,
  status, captured, refunded, created_at, expires_at`

export class LedgerRepo extends Effect.Service<LedgerRepo>()("Ledger/LedgerRepo", {
  effect: Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const holdCols = sql.unsafe(holdColumns)

    const writeEntries = SqlSchema.void({
      Request: Schema.Array(LedgerEntry.insert),
      execute: (entries) => sql`INSERT INTO ledger_entries ${sql.insert(entries)}`
    })
    /** Appends entries (each with a new id): credits, refunds and trials; holds and settlements write their own. */
    const insertEntries = (entries: ReadonlyArray<Omit<typeof LedgerEntry.insert.Type, "id">>) =>
      entries.length === 0
        ? Effect.void
        : writeEntries(entries.map((entry) => ({ ...entry, id: LedgerEntryId.make(randomUUID()) }))).pipe(Effect.orDie)

    const holdStatement = SqlSchema.findAll({
      Request: Schema.Struct({
        requests: Schema.Array(HoldRequestRow),
        at: Schema.DateFromSelf,
        hourStart: Schema.DateFromSelf,
        trialLimit: Schema.BigInt
      }),
      Result: HoldOutcome,
      execute: ({ at, hourStart, requests, trialLimit }) =>
        sql`SELECT idx, outcome FROM ledger_hold(${asJson(requests)}::jsonb, ${at}, ${hourStart}, ${trialLimit})`
    })
    /** Every request's holds in one statement (`ledger_hold`), each with its own checks, in order. */
    const hold = (requests: ReadonlyArray<HoldRequestRow>, at: Date, hourStart: Date, trialLimit: bigint) =>
      holdStatement({ requests, at, hourStart, trialLimit }).pipe(Effect.orDie)

    const settleStatement = SqlSchema.findAll({
      Request: Schema.Struct({
        settlements: Schema.Array(Schema.Struct({ hold_id: HoldId, captured: Schema.BigInt })),
        at: Schema.DateFromSelf
      }),
      Result: SettleOutcome,
      execute: ({ at, settlements }) =>
        sql`
          SELECT kind, hold_id, org_id, agent_id, agent_name, month, spent::text, budget::text, balance::text,
                 amount::text
          FROM ledger_settle(${asJson(settlements)}::jsonb, ${at})`
    })
    /** Every settlement in one statement (`ledger_settle`): the holds it settled and the alerts it marked. */
    const settle = (settlements: ReadonlyArray<{ readonly hold_id: HoldId; readonly captured: bigint }>, at: Date) =>
      settleStatement({ settlements, at }).pipe(Effect.orDie)

    /** Gives back spend of a refunded purchase. */
    const unspendBudget = (agentId: string, month: string, amount: bigint) =>
      sql`
        UPDATE agent_month_spend SET spent = GREATEST(spent - ${amount.toString()}, 0)
        WHERE agent_id = ${agentId} AND month = ${month}`.pipe(Effect.asVoid, Effect.orDie)

    const findMonthSpend = SqlSchema.findOne({
      Request: Schema.Struct({ agentId: Schema.String, month: Schema.String }),
      Result: AgentMonthSpend,
      execute: ({ agentId, month }) =>
        sql`
          SELECT agent_id, to_char(month, 'YYYY-MM-DD') AS month, org_id, spent, held, alerted_80pct
          FROM agent_month_spend WHERE agent_id = ${agentId} AND month = ${month}`
    })
    /** What the agent's month has spent and holds. */
    const monthSpend = (agentId: string, month: string) =>
      findMonthSpend({ agentId, month }).pipe(
        Effect.map(Option.match({ onNone: () => 0n, onSome: (row) => row.spent + row.held })),
        Effect.orDie
      )

    const creditRow = SqlSchema.void({
      Request: Schema.Struct({ orgId: Schema.String, amount: Schema.BigInt, now: Schema.DateFromSelf }),
      execute: ({ amount, now, orgId }) =>
        sql`UPDATE org_balances SET balance = balance + ${amount}, updated_at = ${now} WHERE org_id = ${orgId}`
    })
    /** Puts `amount` back on the balance (a refund of captured credits). */
    const creditBalance = (orgId: string, amount: bigint, now: Date) =>
      creditRow({ orgId, amount, now }).pipe(Effect.orDie)

    const addRow = SqlSchema.single({
      Request: Schema.Struct({
        orgId: Schema.String,
        amount: Schema.BigInt,
        funds: Schema.Boolean,
        now: Schema.DateFromSelf
      }),
      Result: Balance,
      execute: ({ amount, funds, now, orgId }) =>
        sql`
          INSERT INTO org_balances AS b (org_id, balance, funded, low_alert_armed, updated_at)
          VALUES (${orgId}, ${amount}, ${funds}, ${funds}, ${now})
          ON CONFLICT (org_id) DO UPDATE SET
            balance = b.balance + excluded.balance,
            funded = b.funded OR excluded.funded,
            low_alert_armed = b.funded OR excluded.funded,
            updated_at = excluded.updated_at
          RETURNING balance`
    })
    /**
     * Adds credits from outside (top-up, adjustment, trial grant), creating the row. The
     * low-balance alert is armed for funded orgs only: before the first top-up the balance
     * is the trial's, and the alert would fire on its first call (docs/decisions.md).
     */
    const addCredits = (orgId: string, amount: bigint, funds: boolean, now: Date) =>
      addRow({ orgId, amount, funds, now }).pipe(Effect.map((row) => row.balance), Effect.orDie)

    const findBalance = SqlSchema.findOne({
      Request: Schema.Struct({ orgId: Schema.String, lock: Schema.Boolean }),
      Result: BalanceRow,
      execute: ({ lock, orgId }) =>
        sql`
          SELECT b.org_id, b.balance, b.frozen, b.funded, b.low_alert_armed, b.trial_window_start, b.trial_window_spent,
                 b.updated_at, o.low_balance_credits
          FROM org_balances b JOIN orgs o ON o.id = b.org_id
          WHERE b.org_id = ${orgId}${lock ? sql` FOR UPDATE OF b` : sql``}`
    })
    /** Locks the org's balance row (trial expiry computes what to take back under it). */
    const lockBalance = (orgId: string) => findBalance({ orgId, lock: true }).pipe(Effect.orDie)

    const removeRow = SqlSchema.single({
      Request: Schema.Struct({ orgId: Schema.String, amount: Schema.BigInt, now: Schema.DateFromSelf }),
      Result: Balance,
      execute: ({ amount, now, orgId }) =>
        sql`
          UPDATE org_balances SET balance = balance - ${amount}, updated_at = ${now}
          WHERE org_id = ${orgId}
          RETURNING balance`
    })
    /** Removes credits the caller has checked are there (under `lockBalance`), or takes them back past zero. */
    const removeCredits = (orgId: string, amount: bigint, now: Date) =>
      removeRow({ orgId, amount, now }).pipe(Effect.map((row) => row.balance), Effect.orDie)

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

    const findHoldRows = SqlSchema.findAll({
      Request: Schema.Array(HoldId),
      Result: LedgerHold,
      execute: (holdIds) =>
        sql`SELECT ${holdCols} FROM ledger_holds WHERE id = ANY(${holdIds as Array<string>}::uuid[])`
    })
    /** The holds of these ids that exist (the reasons settlements were refused). */
    const findHolds = (holdIds: ReadonlyArray<HoldId>) => findHoldRows(holdIds).pipe(Effect.orDie)
    const findHold = (holdId: HoldId) => Effect.map(findHolds([holdId]), (rows) => Option.fromNullable(rows[0]))

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
    const lockExpiredHold = (holdId: HoldId, now: Date) => findExpiredHold({ holdId, now }).pipe(Effect.orDie)

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
      hold,
      settle,
      insertEntries,
      unspendBudget,
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
      findHolds,
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
