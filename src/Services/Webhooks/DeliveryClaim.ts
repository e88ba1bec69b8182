import type { SqlClient } from "@effect/sql"

export interface DeliveryClaim {
  /** The time of the claim: rows due by then, with no lease running then. */
  readonly at: Date
  readonly limit: number
  /** Tries already in flight per endpoint id. */
  readonly busy: ReadonlyArray<readonly [string, number]>
  /** Tries one endpoint may have in flight at once. */
  readonly perEndpoint: number
  readonly leaseUntil: Date
  readonly leaseToken: string
}

/**
 * The statement that takes up to `limit` due deliveries for one try each, oldest first, but
 * no endpoint more than its room: `perEndpoint` minus its tries already in flight. Candidates
 * are ranked per endpoint among the oldest due rows of endpoints with room (no lock), then
 * the chosen ones are locked with SKIP LOCKED and checked again, so replicas never take the
 * same row. Returns each row with its event and endpoint.
 */
export const deliveryClaimStatement = (sql: SqlClient.SqlClient, claim: DeliveryClaim) => {
  const { at, busy, limit, perEndpoint } = claim
  const notLeased = sql`(d.lease_until IS NULL OR d.lease_until <= ${at})`
  // Endpoints without room are left out of the scan, so a long backlog of one endpoint
  // cannot fill the candidates and hide the others' rows.
  const full = busy.filter(([, count]) => count >= perEndpoint).map(([key]) => key)
  // The check after the lock compares the status as an expression (`d.status || ''`) on
  // purpose: a plain `d.status = 'pending'` lets the planner look each chosen row up through
  // the partial index of due rows instead of the primary key, reading the whole backlog once
  // per candidate whenever the table's statistics predate the backlog (after an outage, or on
  // a prepared statement's generic plan): 100 ms a claim for a backlog of a few thousand.
  return sql`
    WITH candidates AS (
      SELECT d.id, d.endpoint_id, d.next_attempt_at,
             row_number() OVER (PARTITION BY d.endpoint_id ORDER BY d.next_attempt_at, d.seq) AS endpoint_rank
      FROM (
        SELECT d.id, d.endpoint_id, d.next_attempt_at, d.seq FROM webhook_deliveries d
        WHERE d.status = 'pending' AND d.next_attempt_at <= ${at} AND ${notLeased}
          AND d.endpoint_id <> ALL (${full}::uuid[])
        ORDER BY d.next_attempt_at
        LIMIT ${limit * 8}
      ) d
    ),
    busy AS (
      SELECT * FROM unnest(${busy.map(([key]) => key)}::uuid[], ${busy.map(([, count]) => count)}::int[])
        AS b (endpoint_id, in_flight)
    ),
    chosen AS (
      SELECT d.id FROM webhook_deliveries d
      JOIN candidates c ON c.id = d.id
      LEFT JOIN busy b ON b.endpoint_id = c.endpoint_id
      WHERE c.endpoint_rank <= ${perEndpoint} - COALESCE(b.in_flight, 0)
        AND (d.status || '') = 'pending' AND d.next_attempt_at <= ${at} AND ${notLeased}
      ORDER BY c.next_attempt_at
      LIMIT ${limit}
      FOR UPDATE OF d SKIP LOCKED
    )
    UPDATE webhook_deliveries d
    SET lease_until = ${claim.leaseUntil}, lease_token = ${claim.leaseToken}
    FROM chosen, events e, webhook_endpoints w
    WHERE d.id = chosen.id AND e.id = d.event_id AND w.id = d.endpoint_id
    RETURNING d.id, d.endpoint_id, d.attempts, d.lease_token, d.event_id, e.type AS event_type, e.data AS event_data,
              e.created_at AS event_created_at, w.url, w.secret_enc, w.previous_secret_enc, w.previous_secret_expires_at,
              d.replayed_at`
}
