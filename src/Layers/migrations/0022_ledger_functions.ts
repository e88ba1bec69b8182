import { SqlClient } from "@effect/sql"
import { Effect } from "effect"

/**
 * The ledger's two money statements as functions of the database, so that holds and
 * settlements that arrive together are made in one call (group commit) with each one's own
 * checks, exactly as one by one. Both are the ledger's (Services/Ledger/LedgerRepo.ts calls
 * them); nothing else calls them.
 *
 * Lock order, the same in every transaction that touches these rows: the holds, then the
 * agents' month rows in agent order, then the orgs' balance rows in org order. Every row a
 * call needs is locked first in that order, then the requests are applied one by one in
 * the order given, so two batches never wait on each other in a circle and a request sees
 * what the requests before it took.
 *
 * `ledger_hold`: each request holds `amount` per entry of `holds` (all or none) for one
 * agent: the month's budget (unless approved), then, live only, the org's balance (not
 * frozen, enough credits, the trial's hourly window before the first top-up). Answers one
 * row per request: `held`, or the check that refused (`credits_frozen`, `over_budget`,
 * `insufficient_credits`, `trial_limit`).
 *
 * `ledger_settle`: each hold captured for `captured` (0 releases it) when it is still held
 * and covers it; the agents' month rows move the amounts from held to spent, what was not
 * charged goes back to the org's balance (and its trial window), the capture and release
 * entries are written. The 80% budget alert and the low-balance alert are marked here, once,
 * under the rows' locks, and answered so the ledger writes their events in the same
 * transaction.
 */
export default Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  yield* sql`DROP FUNCTION IF EXISTS ledger_event_due()`
  yield* sql`
    CREATE FUNCTION ledger_hold(requests jsonb, at timestamptz, hour_start timestamptz, trial_limit bigint)
    RETURNS TABLE (idx int, outcome text)
    LANGUAGE plpgsql AS $$
    #variable_conflict use_column
    DECLARE
      k record;
      r record;
      total bigint;
      spend record;
      bal record;
      window_spent bigint;
    BEGIN
      -- Every month row the requests need is locked first, in agent order (made when it is
      -- missing), then the balances of the orgs of live requests, in org order: each by its
      -- key, so no statistics can turn a lookup into a scan.
      FOR k IN
        SELECT DISTINCT (x ->> 'agent_id')::uuid AS agent_id, (x ->> 'month')::date AS month,
               (x ->> 'org_id')::uuid AS org_id
        FROM jsonb_array_elements(requests) AS x ORDER BY 1, 2
      LOOP
        PERFORM 1 FROM agent_month_spend s WHERE s.agent_id = k.agent_id AND s.month = k.month FOR UPDATE;
        IF NOT FOUND THEN
          INSERT INTO agent_month_spend (agent_id, month, org_id, spent, held)
            VALUES (k.agent_id, k.month, k.org_id, 0, 0)
            ON CONFLICT (agent_id, month) DO NOTHING;
          PERFORM 1 FROM agent_month_spend s WHERE s.agent_id = k.agent_id AND s.month = k.month FOR UPDATE;
        END IF;
      END LOOP;
      FOR k IN
        SELECT DISTINCT (x ->> 'org_id')::uuid AS org_id
        FROM jsonb_array_elements(requests) AS x WHERE NOT (x ->> 'test')::boolean ORDER BY 1
      LOOP
        PERFORM 1 FROM org_balances b WHERE b.org_id = k.org_id FOR UPDATE;
      END LOOP;

      FOR r IN
        SELECT (x.ordinality - 1)::int AS i, (x.value ->> 'org_id')::uuid AS org_id,
               (x.value ->> 'agent_id')::uuid AS agent_id, (x.value ->> 'amount')::bigint AS amount,
               (x.value ->> 'month')::date AS month, (x.value ->> 'approved')::boolean AS approved,
               (x.value ->> 'test')::boolean AS test, x.value ->> 'purpose' AS purpose,
               (x.value ->> 'expires_at')::timestamptz AS expires_at, x.value -> 'holds' AS holds,
               a.monthly_budget_credits AS budget
        FROM jsonb_array_elements(requests) WITH ORDINALITY AS x
        JOIN agents a ON a.id = (x.value ->> 'agent_id')::uuid
        ORDER BY x.ordinality
      LOOP
        total := r.amount * jsonb_array_length(r.holds);
        SELECT s.spent, s.held INTO spend FROM agent_month_spend s WHERE s.agent_id = r.agent_id AND s.month = r.month;
        bal := NULL;
        IF NOT r.test THEN
          SELECT b.balance, b.frozen, b.funded, b.trial_window_start, b.trial_window_spent INTO bal
            FROM org_balances b WHERE b.org_id = r.org_id;
          IF FOUND AND bal.frozen THEN
            idx := r.i; outcome := 'credits_frozen'; RETURN NEXT; CONTINUE;
          END IF;
        END IF;
        IF NOT r.approved AND spend.spent + spend.held + total > r.budget THEN
          idx := r.i; outcome := 'over_budget'; RETURN NEXT; CONTINUE;
        END IF;
        IF NOT r.test THEN
          IF bal.balance IS NULL OR bal.balance < total THEN
            idx := r.i; outcome := 'insufficient_credits'; RETURN NEXT; CONTINUE;
          END IF;
          window_spent := CASE WHEN bal.trial_window_start = hour_start THEN bal.trial_window_spent ELSE 0 END;
          IF NOT bal.funded AND window_spent + total > trial_limit THEN
            idx := r.i; outcome := 'trial_limit'; RETURN NEXT; CONTINUE;
          END IF;
          UPDATE org_balances SET
            balance = balance - total,
            trial_window_start = CASE WHEN funded THEN trial_window_start ELSE hour_start END,
            trial_window_spent = CASE WHEN funded THEN trial_window_spent ELSE window_spent + total END,
            updated_at = at
          WHERE org_balances.org_id = r.org_id;
        END IF;
        UPDATE agent_month_spend SET held = held + total
          WHERE agent_month_spend.agent_id = r.agent_id AND agent_month_spend.month = r.month;
        INSERT INTO ledger_holds (id, org_id, agent_id, amount, purpose, reference, test_mode, budget_approved, month,
                                  status, created_at, expires_at)
          SELECT (h ->> 'id')::uuid, r.org_id, r.agent_id, r.amount, r.purpose, h ->> 'reference', r.test, r.approved,
                 r.month, 'held', at, r.expires_at
          FROM jsonb_array_elements(r.holds) AS h;
        IF NOT r.test THEN
          INSERT INTO ledger_entries (id, org_id, kind, amount, credits, hold_id, agent_id, note, created_at)
            SELECT gen_random_uuid(), r.org_id, 'hold', -r.amount, r.amount, (h ->> 'id')::uuid, r.agent_id, r.purpose,
                   at
            FROM jsonb_array_elements(r.holds) AS h;
        END IF;
        idx := r.i; outcome := 'held'; RETURN NEXT;
      END LOOP;
    END
    $$`
  yield* sql`
    CREATE FUNCTION ledger_settle(settlements jsonb, at timestamptz)
    RETURNS TABLE (kind text, hold_id uuid, org_id uuid, agent_id uuid, agent_name text, month text, spent bigint,
                   budget bigint, balance bigint, amount bigint)
    LANGUAGE plpgsql AS $$
    #variable_conflict use_column
    DECLARE
      ids uuid[] := ARRAY(SELECT (x ->> 'hold_id')::uuid FROM jsonb_array_elements(settlements) AS x);
      settled jsonb;
      m record;
      o record;
      new_spent bigint;
      was_alerted boolean;
      agent record;
      after_balance bigint;
    BEGIN
      -- The holds first: each settles once, only while still held and covering its capture.
      -- Each is found by its key (id = ANY, the status compared as an expression), so the
      -- partial index of open holds, on stale statistics, cannot make it read every open hold.
      WITH i AS (
        SELECT (x ->> 'hold_id')::uuid AS id, (x ->> 'captured')::bigint AS captured
        FROM jsonb_array_elements(settlements) AS x
      ), h AS (
        UPDATE ledger_holds lh SET status = CASE WHEN i.captured > 0 THEN 'captured' ELSE 'released' END,
          captured = i.captured, settled_at = at
        FROM i
        WHERE lh.id = ANY(ids) AND lh.id = i.id AND (lh.status || '') = 'held' AND lh.amount >= i.captured
        RETURNING lh.id, lh.org_id, lh.agent_id, lh.amount, i.captured, lh.purpose, lh.month,
                  lh.test_mode OR lh.refused AS no_credits,
                  date_trunc('hour', lh.created_at AT TIME ZONE 'UTC') AT TIME ZONE 'UTC' AS trial_hour
      )
      SELECT COALESCE(jsonb_agg(h), '[]'::jsonb) INTO settled FROM h;

      -- The agents' months, in agent order: held becomes spent; the 80% alert is marked once.
      FOR m IN
        SELECT t.agent_id, t.month, sum(t.amount) AS amount, sum(t.captured) AS captured
        FROM jsonb_to_recordset(settled) AS t (agent_id uuid, month date, amount bigint, captured bigint)
        GROUP BY t.agent_id, t.month ORDER BY t.agent_id, t.month
      LOOP
        UPDATE agent_month_spend s SET held = s.held - m.amount, spent = s.spent + m.captured
          WHERE s.agent_id = m.agent_id AND s.month = m.month
          RETURNING s.spent, s.alerted_80pct INTO new_spent, was_alerted;
        IF m.captured > 0 AND NOT was_alerted THEN
          SELECT a.name, a.mode, a.monthly_budget_credits, a.org_id INTO agent FROM agents a WHERE a.id = m.agent_id;
          IF agent.mode = 'live' AND agent.monthly_budget_credits > 0
             AND new_spent * 5 >= agent.monthly_budget_credits * 4 THEN
            UPDATE agent_month_spend s SET alerted_80pct = true WHERE s.agent_id = m.agent_id AND s.month = m.month;
            kind := 'budget_reached'; hold_id := NULL; org_id := agent.org_id; agent_id := m.agent_id;
            agent_name := agent.name; month := to_char(m.month, 'YYYY-MM-DD'); spent := new_spent;
            budget := agent.monthly_budget_credits; balance := NULL; amount := NULL;
            RETURN NEXT;
          END IF;
        END IF;
      END LOOP;

      -- The orgs' balances, in org order: what was not charged goes back, with the trial's
      -- window; a charge that leaves the balance under the org's armed alert fires it, once.
      FOR o IN
        SELECT t.org_id, sum(t.amount - t.captured) AS back, bool_or(t.captured > 0) AS charged,
               (array_agg(t.id ORDER BY t.id) FILTER (WHERE t.captured > 0))[1] AS first_charged
        FROM jsonb_to_recordset(settled) AS t (id uuid, org_id uuid, amount bigint, captured bigint, no_credits boolean)
        WHERE NOT t.no_credits
        GROUP BY t.org_id ORDER BY t.org_id
      LOOP
        IF o.back > 0 THEN
          UPDATE org_balances b SET
            balance = b.balance + o.back,
            trial_window_spent = CASE WHEN b.funded THEN b.trial_window_spent ELSE GREATEST(b.trial_window_spent - COALESCE((
              SELECT sum(t.amount - t.captured)
              FROM jsonb_to_recordset(settled) AS t (org_id uuid, amount bigint, captured bigint, no_credits boolean,
                                                     trial_hour timestamptz)
              WHERE t.org_id = o.org_id AND NOT t.no_credits AND t.trial_hour = b.trial_window_start), 0), 0) END,
            updated_at = at
          WHERE b.org_id = o.org_id;
        END IF;
        IF o.charged THEN
          UPDATE org_balances b SET low_alert_armed = false, low_alert_fired_by = o.first_charged, updated_at = at
            FROM orgs og
            WHERE b.org_id = o.org_id AND og.id = b.org_id AND b.low_alert_armed AND b.balance < og.low_balance_credits
            RETURNING b.balance INTO after_balance;
          IF FOUND THEN
            kind := 'balance_low'; hold_id := o.first_charged; org_id := o.org_id; agent_id := NULL;
            agent_name := NULL; month := NULL; spent := NULL; budget := NULL; balance := after_balance; amount := NULL;
            RETURN NEXT;
          END IF;
        END IF;
      END LOOP;

      INSERT INTO ledger_entries (id, org_id, kind, amount, credits, hold_id, agent_id, note, created_at)
        SELECT gen_random_uuid(), t.org_id, x.kind, x.amount, x.credits, t.id, t.agent_id, t.purpose, at
        FROM jsonb_to_recordset(settled) AS t (id uuid, org_id uuid, agent_id uuid, amount bigint, captured bigint,
                                               purpose text, no_credits boolean),
             LATERAL (VALUES ('capture', 0::bigint, t.captured),
                             ('release', t.amount - t.captured, t.amount - t.captured)) AS x (kind, amount, credits)
        WHERE NOT t.no_credits AND x.credits > 0;

      RETURN QUERY
        SELECT 'settled'::text, t.id, t.org_id, t.agent_id, NULL::text, NULL::text, NULL::bigint, NULL::bigint,
               NULL::bigint, t.amount
        FROM jsonb_to_recordset(settled) AS t (id uuid, org_id uuid, agent_id uuid, amount bigint);
    END
    $$`
})
