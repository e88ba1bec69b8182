import { SqlClient } from "@effect/sql"
import { Effect } from "effect"

/**
 * Writes of many rows at once that must find each row by its key whatever the statistics
 * say (a young table, a burst of calls in flight, a prepared statement's generic plan): a
 * join of the batch with the table could be planned as a scan of every open row.
 *
 * - `gateway_finish_calls` (the Gateway's, GatewayRepo.finishCalls): completes pending call
 *   rows with their settlement.
 * - `purchase_lock_claimed_items` (Purchasing's, ItemsRepo.lockClaimedItems): locks, in id
 *   order, the running items still claimed by `owner`, and answers their ids.
 */
export default Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  yield* sql`
    CREATE FUNCTION gateway_finish_calls(finishes jsonb) RETURNS void
    LANGUAGE plpgsql AS $$
    DECLARE
      d record;
    BEGIN
      FOR d IN
        SELECT * FROM jsonb_to_recordset(finishes)
          AS x (id uuid, hold_id uuid, status text, charged_credits bigint, refunded_credits bigint, refund_reason text,
                provider_status int, latency_ms int, finished_at timestamptz, response_sha256 text)
      LOOP
        UPDATE gateway_calls SET status = d.status, charged_credits = d.charged_credits,
          refunded_credits = d.refunded_credits, refund_reason = d.refund_reason, provider_status = d.provider_status,
          latency_ms = d.latency_ms, finished_at = d.finished_at, hold_id = d.hold_id, response_sha256 = d.response_sha256
        WHERE id = d.id AND (status || '') = 'pending';
      END LOOP;
    END
    $$`
  yield* sql`
    CREATE FUNCTION purchase_lock_claimed_items(item_ids uuid[], owner text) RETURNS SETOF uuid
    LANGUAGE plpgsql AS $$
    DECLARE
      item uuid;
    BEGIN
      FOR item IN SELECT DISTINCT x FROM unnest(item_ids) AS x ORDER BY 1 LOOP
        RETURN QUERY SELECT i.id FROM receipt_items i
          WHERE i.id = item AND (i.status || '') = 'running' AND i.claimed_by = owner FOR UPDATE;
      END LOOP;
    END
    $$`
})
