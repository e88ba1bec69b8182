import type { SqlClient } from "@effect/sql"
import { Schema } from "effect"

/**
 * Several holds of one agent settled in one statement (a job's batch, a purchase's items):
 * each hold captured for its amount or released, the agent's month rows moving the held
 * amounts to spent, what was not charged going back to the org's balance (and its trial
 * window), the capture and release entries. The same rules as one hold's settlement
 * (`LedgerRepo.settleSql`), summed: the balance only grows in a settlement, so applying the
 * releases before the captures is one valid order of the batch, and the low-balance alert
 * fires when a charge leaves the balance under it after the whole batch. Lock order as in
 * every hold and settlement: the holds, the agent's month rows, then the org's row.
 *
 * Only holds of the first hold's agent are settled (one agent's rows, so two batches never
 * lock agents in opposite orders); a hold no longer held, another agent's, or one whose
 * amount is under its capture is left as it is and missing from `settled`.
 */
export interface BatchHold {
  readonly holdId: string
  readonly captured: bigint
}

export const BatchSettled = Schema.Struct({
  /** The holds this statement settled. */
  settled: Schema.Array(Schema.String),
  org_id: Schema.NullOr(Schema.String),
  agent_id: Schema.NullOr(Schema.String),
  /** The agent's month rows the batch charged, with what their budget alert needs. */
  months: Schema.Array(Schema.Struct({
    month: Schema.String,
    spent: Schema.BigInt,
    budget: Schema.BigInt,
    agent_name: Schema.String,
    budget_alert_due: Schema.Boolean
  })),
  /** The balance after the batch, when the org's row was written. */
  balance: Schema.NullOr(Schema.BigInt),
  low_alert_fired: Schema.Boolean
})
export type BatchSettled = typeof BatchSettled.Type

export const batchSettlementSql = (sql: SqlClient.SqlClient, holds: ReadonlyArray<BatchHold>, now: Date) => {
  const input = JSON.stringify(holds.map((hold) => ({ id: hold.holdId, captured: hold.captured.toString() })))
  const ids = holds.map((hold) => hold.holdId)
  // Each hold is found by its key (`id = ANY`, the status compared as an expression) so the
  // partial index of open holds, on stale statistics, cannot make it read every open hold.
  return sql`
    WITH
    i AS (SELECT * FROM jsonb_to_recordset(${input}::jsonb) AS x (id uuid, captured bigint)),
    h AS (
      UPDATE ledger_holds lh SET status = CASE WHEN i.captured > 0 THEN 'captured' ELSE 'released' END,
        captured = i.captured, settled_at = ${now}
      FROM i
      WHERE lh.id = ANY(${ids}::uuid[]) AND lh.id = i.id AND (lh.status || '') = 'held' AND lh.amount >= i.captured
        AND lh.agent_id = (SELECT agent_id FROM ledger_holds WHERE id = ${ids[0] ?? null}::uuid)
      RETURNING lh.id, lh.org_id, lh.agent_id, lh.amount, lh.purpose, lh.test_mode OR lh.refused AS no_credits,
                lh.month, lh.created_at, i.captured
    ),
    hs AS (
      SELECT agent_id, month, sum(amount) AS amount, sum(captured) AS captured FROM h GROUP BY agent_id, month
    ),
    s AS (
      UPDATE agent_month_spend s SET held = s.held - hs.amount, spent = s.spent + hs.captured
      FROM hs, agents a
      WHERE s.agent_id = hs.agent_id AND s.month = hs.month AND a.id = hs.agent_id
      RETURNING to_char(s.month, 'YYYY-MM-DD') AS month, s.spent, a.monthly_budget_credits AS budget,
                a.name AS agent_name,
                COALESCE(hs.captured > 0 AND a.mode = 'live' AND NOT s.alerted_80pct
                         AND a.monthly_budget_credits > 0 AND s.spent * 5 >= a.monthly_budget_credits * 4, false)
                  AS budget_alert_due
    ),
    ho AS (
      SELECT org_id, sum(amount - captured) AS back, bool_or(captured > 0) AS charged,
             min(id::text) FILTER (WHERE captured > 0) AS first_charged
      FROM h WHERE NOT no_credits GROUP BY org_id
    ),
    o AS (
      UPDATE org_balances b SET
        balance = b.balance + ho.back,
        trial_window_spent = CASE WHEN b.funded THEN b.trial_window_spent ELSE GREATEST(b.trial_window_spent - COALESCE((
          SELECT sum(h.amount - h.captured) FROM h
          WHERE NOT h.no_credits
            AND b.trial_window_start = date_trunc('hour', h.created_at AT TIME ZONE 'UTC') AT TIME ZONE 'UTC'
        ), 0), 0) END,
        low_alert_armed = b.low_alert_armed AND NOT (ho.charged AND b.balance + ho.back < og.low_balance_credits),
        low_alert_fired_by = CASE
          WHEN ho.charged AND b.low_alert_armed AND b.balance + ho.back < og.low_balance_credits
            THEN ho.first_charged::uuid
          ELSE b.low_alert_fired_by END,
        updated_at = ${now}
      FROM ho, orgs og
      WHERE b.org_id = ho.org_id AND og.id = ho.org_id
        AND (SELECT count(*) FROM s) >= 0
        AND (ho.back > 0 OR (ho.charged AND b.low_alert_armed AND b.balance < og.low_balance_credits))
      RETURNING b.balance, ho.charged AND b.low_alert_fired_by = ho.first_charged::uuid AS low_alert_fired
    ),
    e AS (
      INSERT INTO ledger_entries (id, org_id, kind, amount, credits, hold_id, agent_id, note, created_at)
      SELECT gen_random_uuid(), h.org_id, x.kind, x.amount, x.credits, h.id, h.agent_id, h.purpose, ${now}
      FROM h, LATERAL (VALUES ('capture', 0::bigint, h.captured),
                              ('release', h.amount - h.captured, h.amount - h.captured)) AS x (kind, amount, credits)
      WHERE NOT h.no_credits AND x.credits > 0
      RETURNING 1
    )
    SELECT
      (SELECT COALESCE(json_agg(id), '[]'::json) FROM h) AS settled,
      (SELECT org_id FROM h LIMIT 1) AS org_id,
      (SELECT agent_id FROM h LIMIT 1) AS agent_id,
      (SELECT COALESCE(json_agg(json_build_object(
        'month', month, 'spent', spent::text, 'budget', budget::text, 'agent_name', agent_name,
        'budget_alert_due', budget_alert_due)), '[]'::json) FROM s) AS months,
      (SELECT balance::text FROM o) AS balance,
      COALESCE((SELECT low_alert_fired FROM o), false) AS low_alert_fired,
      (SELECT count(*) FROM e) AS entries`
}
