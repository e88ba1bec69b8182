import { SqlClient } from "@effect/sql"
import { Effect } from "effect"

/**
 * The daily limits' counting as a function of the database (`quota_count`), so that the
 * calls of a batch are counted in one call, each exactly as one by one would: the
 * provider's daily call cap of the org, then the people lookups of a company domain. The
 * counter rows are made and locked first, each by its key, in one order (providers' rows by
 * org and provider, then lookups' rows by org and domain), then the requests are counted
 * one by one in the order given. Answers one row per request: `counted`, `provider_quota` or
 * `aup_limit` (a lookup refused gives its provider count back at once).
 *
 * `quota_give_back` takes back the counts of calls that did not go ahead (their hold was
 * refused), in the same transaction. Both are the Quotas capability's
 * (Services/Quotas/Quotas.ts).
 */
export default Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  yield* sql`
    CREATE FUNCTION quota_count(requests jsonb, lookups_limit int)
    RETURNS TABLE (idx int, outcome text)
    LANGUAGE plpgsql AS $$
    #variable_conflict use_column
    DECLARE
      k record;
      r record;
    BEGIN
      -- Every counter row is locked first, each by its key (made when it is missing): the
      -- providers' rows by org and provider, then the lookups' rows by org and domain.
      FOR k IN
        SELECT DISTINCT (x ->> 'org_id')::uuid AS org_id, x ->> 'provider_id' AS provider_id, (x ->> 'day')::date AS day
        FROM jsonb_array_elements(requests) AS x ORDER BY 1, 2, 3
      LOOP
        PERFORM 1 FROM provider_daily_calls q
          WHERE q.org_id = k.org_id AND q.provider_id = k.provider_id AND q.day = k.day FOR UPDATE;
        IF NOT FOUND THEN
          INSERT INTO provider_daily_calls (org_id, provider_id, day, calls) VALUES (k.org_id, k.provider_id, k.day, 0)
            ON CONFLICT (org_id, provider_id, day) DO NOTHING;
          PERFORM 1 FROM provider_daily_calls q
            WHERE q.org_id = k.org_id AND q.provider_id = k.provider_id AND q.day = k.day FOR UPDATE;
        END IF;
      END LOOP;
      FOR k IN
        SELECT DISTINCT (x ->> 'org_id')::uuid AS org_id, x ->> 'domain' AS domain, (x ->> 'day')::date AS day
        FROM jsonb_array_elements(requests) AS x WHERE x ->> 'domain' IS NOT NULL ORDER BY 1, 2, 3
      LOOP
        PERFORM 1 FROM people_lookups_daily l
          WHERE l.org_id = k.org_id AND l.domain = k.domain AND l.day = k.day FOR UPDATE;
        IF NOT FOUND THEN
          INSERT INTO people_lookups_daily (org_id, domain, day, lookups) VALUES (k.org_id, k.domain, k.day, 0)
            ON CONFLICT (org_id, domain, day) DO NOTHING;
          PERFORM 1 FROM people_lookups_daily l
            WHERE l.org_id = k.org_id AND l.domain = k.domain AND l.day = k.day FOR UPDATE;
        END IF;
      END LOOP;

      FOR r IN
        SELECT (x.ordinality - 1)::int AS i, (x.value ->> 'org_id')::uuid AS org_id, x.value ->> 'provider_id' AS provider_id,
               (x.value ->> 'day')::date AS day, (x.value ->> 'daily_cap')::int AS daily_cap, x.value ->> 'domain' AS domain
        FROM jsonb_array_elements(requests) WITH ORDINALITY AS x ORDER BY x.ordinality
      LOOP
        UPDATE provider_daily_calls q SET calls = q.calls + 1
          WHERE q.org_id = r.org_id AND q.provider_id = r.provider_id AND q.day = r.day AND q.calls < r.daily_cap;
        IF NOT FOUND THEN
          idx := r.i; outcome := 'provider_quota'; RETURN NEXT; CONTINUE;
        END IF;
        IF r.domain IS NOT NULL THEN
          UPDATE people_lookups_daily l SET lookups = l.lookups + 1
            WHERE l.org_id = r.org_id AND l.domain = r.domain AND l.day = r.day AND l.lookups < lookups_limit;
          IF NOT FOUND THEN
            UPDATE provider_daily_calls q SET calls = q.calls - 1
              WHERE q.org_id = r.org_id AND q.provider_id = r.provider_id AND q.day = r.day;
            idx := r.i; outcome := 'aup_limit'; RETURN NEXT; CONTINUE;
          END IF;
        END IF;
        idx := r.i; outcome := 'counted'; RETURN NEXT;
      END LOOP;
    END
    $$`
  yield* sql`
    CREATE FUNCTION quota_give_back(requests jsonb) RETURNS void
    LANGUAGE sql AS $$
      UPDATE provider_daily_calls q SET calls = q.calls - t.n
      FROM (
        SELECT (x ->> 'org_id')::uuid AS org_id, x ->> 'provider_id' AS provider_id, (x ->> 'day')::date AS day,
               count(*) AS n
        FROM jsonb_array_elements(requests) AS x GROUP BY 1, 2, 3
      ) t
      WHERE q.org_id = t.org_id AND q.provider_id = t.provider_id AND q.day = t.day;
      UPDATE people_lookups_daily l SET lookups = l.lookups - t.n
      FROM (
        SELECT (x ->> 'org_id')::uuid AS org_id, x ->> 'domain' AS domain, (x ->> 'day')::date AS day, count(*) AS n
        FROM jsonb_array_elements(requests) AS x WHERE x ->> 'domain' IS NOT NULL GROUP BY 1, 2, 3
      ) t
      WHERE l.org_id = t.org_id AND l.domain = t.domain AND l.day = t.day;
    $$`
})
