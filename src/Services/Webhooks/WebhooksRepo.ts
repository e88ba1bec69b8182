import { SqlClient, SqlSchema } from "@effect/sql"
import { Effect, Schema } from "effect"
import { EventTypeSchema } from "../../Domain/Events.js"
import { OrgId, WebhookEndpointId } from "../../Domain/Ids.js"

/**
 * Webhooks' SQL: endpoints, and deliveries with their event; rows decoded. The delivery
 * worker's claim and outcome statements live with it in Delivery.ts.
 */
export const DeliveryStatus = Schema.Literal("pending", "delivered", "failed")
export type DeliveryStatus = typeof DeliveryStatus.Type

export const EndpointRow = Schema.Struct({
  id: WebhookEndpointId,
  url: Schema.String,
  events: Schema.Array(EventTypeSchema),
  secret_prefix: Schema.String,
  previous_secret_expires_at: Schema.NullOr(Schema.DateFromSelf),
  created_at: Schema.DateFromSelf
})
export type EndpointRow = typeof EndpointRow.Type

export const DeliveryRow = Schema.Struct({
  id: Schema.String,
  org_id: OrgId,
  endpoint_id: WebhookEndpointId,
  event_id: Schema.String,
  event_type: EventTypeSchema,
  status: DeliveryStatus,
  attempts: Schema.Number,
  next_attempt_at: Schema.NullOr(Schema.DateFromSelf),
  last_attempt_at: Schema.NullOr(Schema.DateFromSelf),
  last_status_code: Schema.NullOr(Schema.Number),
  last_error: Schema.NullOr(Schema.String),
  delivered_at: Schema.NullOr(Schema.DateFromSelf),
  created_at: Schema.DateFromSelf,
  seq: Schema.String
})
export type DeliveryRow = typeof DeliveryRow.Type

/** A delivery taken for one try, with its event and endpoint. */
export const ClaimedDelivery = Schema.Struct({
  id: Schema.String,
  endpoint_id: Schema.String,
  attempts: Schema.Number,
  lease_token: Schema.String,
  event_id: Schema.String,
  event_type: Schema.String,
  event_data: Schema.Unknown,
  event_created_at: Schema.DateFromSelf,
  url: Schema.String,
  secret_enc: Schema.String,
  previous_secret_enc: Schema.NullOr(Schema.String),
  previous_secret_expires_at: Schema.NullOr(Schema.DateFromSelf),
  replayed_at: Schema.NullOr(Schema.DateFromSelf)
})
export type ClaimedDelivery = typeof ClaimedDelivery.Type

const OrgScoped = Schema.Struct({ orgId: Schema.String, id: Schema.String })
const Id = Schema.Struct({ id: Schema.String })

export class WebhooksRepo extends Effect.Service<WebhooksRepo>()("Webhooks/WebhooksRepo", {
  effect: Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const deliveryColumns = sql`d.id, d.org_id, d.endpoint_id, d.event_id, e.type AS event_type, d.status, d.attempts,
      d.next_attempt_at, d.last_attempt_at, d.last_status_code, d.last_error, d.delivered_at, d.created_at, d.seq`
    const endpointColumns = sql`id, url, events, secret_prefix, previous_secret_expires_at, created_at`

    const countEndpoints = SqlSchema.single({
      Request: Schema.String,
      Result: Schema.Struct({ n: Schema.Number }),
      execute: (orgId) =>
        sql`SELECT count(*)::int AS n FROM webhook_endpoints WHERE org_id = ${orgId} AND deleted_at IS NULL`
    })
    /** The org's endpoints not deleted. */
    const endpointCount = (orgId: string) => Effect.map(countEndpoints(orgId), (row) => row.n)

    const insertEndpoint = SqlSchema.single({
      Request: Schema.Struct({
        id: Schema.String,
        orgId: Schema.String,
        url: Schema.String,
        events: Schema.Array(Schema.String),
        sealed: Schema.String,
        secretPrefix: Schema.String,
        at: Schema.DateFromSelf
      }),
      Result: EndpointRow,
      execute: (row) =>
        sql`
          INSERT INTO webhook_endpoints (id, org_id, url, events, secret_enc, secret_prefix, created_at)
          VALUES (${row.id}, ${row.orgId}, ${row.url}, ${row.events as Array<string>}, ${row.sealed},
                  ${row.secretPrefix}, ${row.at})
          RETURNING ${endpointColumns}`
    })

    const listEndpoints = SqlSchema.findAll({
      Request: Schema.String,
      Result: EndpointRow,
      execute: (orgId) =>
        sql`
          SELECT ${endpointColumns} FROM webhook_endpoints
          WHERE org_id = ${orgId} AND deleted_at IS NULL
          ORDER BY created_at DESC, id`
    })

    const findEndpoint = SqlSchema.findOne({
      Request: OrgScoped,
      Result: Id,
      execute: ({ id, orgId }) =>
        sql`SELECT id FROM webhook_endpoints WHERE id = ${id} AND org_id = ${orgId} AND deleted_at IS NULL`
    })

    const markDeleted = SqlSchema.findOne({
      Request: Schema.Struct({ orgId: Schema.String, id: Schema.String, at: Schema.DateFromSelf }),
      Result: Id,
      execute: ({ at, id, orgId }) =>
        sql`
          UPDATE webhook_endpoints SET deleted_at = ${at}
          WHERE id = ${id} AND org_id = ${orgId} AND deleted_at IS NULL
          RETURNING id`
    })

    /**
     * A new secret for an endpoint; the one it replaces stays, sealed, until `previousUntil`
     * (a second rotation within that time drops the first secret at once).
     */
    const rotateSecret = SqlSchema.findOne({
      Request: Schema.Struct({
        orgId: Schema.String,
        id: Schema.String,
        sealed: Schema.String,
        secretPrefix: Schema.String,
        previousUntil: Schema.DateFromSelf
      }),
      Result: EndpointRow,
      execute: (row) =>
        sql`
          UPDATE webhook_endpoints SET previous_secret_enc = secret_enc, previous_secret_expires_at = ${row.previousUntil},
            secret_enc = ${row.sealed}, secret_prefix = ${row.secretPrefix}
          WHERE id = ${row.id} AND org_id = ${row.orgId} AND deleted_at IS NULL
          RETURNING ${endpointColumns}`
    })

    /**
     * Deliveries of one endpoint made due again now, their tries counted from zero and their
     * window from now; one in flight (leased) is left to its try. Answers the events replayed.
     */
    const replayDeliveries = SqlSchema.findAll({
      Request: Schema.Struct({
        orgId: Schema.String,
        endpointId: Schema.String,
        eventId: Schema.NullOr(Schema.String),
        since: Schema.NullOr(Schema.DateFromSelf),
        onlyFailed: Schema.Boolean,
        limit: Schema.Number,
        now: Schema.DateFromSelf
      }),
      Result: Schema.Struct({ event_id: Schema.String }),
      execute: (r) =>
        sql`
          UPDATE webhook_deliveries d
          SET status = 'pending', attempts = 0, next_attempt_at = ${r.now}, replayed_at = ${r.now}, delivered_at = NULL
          WHERE d.id IN (
            SELECT id FROM webhook_deliveries
            WHERE org_id = ${r.orgId} AND endpoint_id = ${r.endpointId}
              AND (lease_until IS NULL OR lease_until <= ${r.now})
              ${r.eventId === null ? sql`` : sql`AND event_id = ${r.eventId}`}
              ${r.since === null ? sql`` : sql`AND created_at >= ${r.since}`}
              ${r.onlyFailed ? sql`AND status = 'failed'` : sql``}
            ORDER BY created_at, seq
            LIMIT ${r.limit}
          )
          -- Checked again on the row as locked: a try that took it meanwhile keeps it.
          AND (d.lease_until IS NULL OR d.lease_until <= ${r.now})
          RETURNING d.event_id`
    })

    /** Pending deliveries of a deleted endpoint end as failed. */
    const failPendingDeliveries = (endpointId: string) =>
      sql`
        UPDATE webhook_deliveries
        SET status = 'failed', last_error = 'Endpoint deleted', next_attempt_at = NULL, lease_until = NULL,
            lease_token = NULL
        WHERE endpoint_id = ${endpointId} AND status = 'pending'`.pipe(Effect.asVoid)

    /** A delivery written already leased to its caller, so it is tried there and then, not by a worker. */
    const insertLeasedDelivery = (row: {
      readonly id: string
      readonly orgId: string
      readonly endpointId: string
      readonly eventId: string
      readonly at: Date
      readonly leaseUntil: Date
      readonly leaseToken: string
    }) =>
      sql`
        INSERT INTO webhook_deliveries (id, org_id, endpoint_id, event_id, status, attempts, next_attempt_at,
                                        lease_until, lease_token, created_at)
        VALUES (${row.id}, ${row.orgId}, ${row.endpointId}, ${row.eventId}, 'pending', 0, ${row.at},
                ${row.leaseUntil}, ${row.leaseToken}, ${row.at})`.pipe(Effect.asVoid)

    const findDeliverySeq = SqlSchema.findOne({
      Request: OrgScoped,
      Result: Schema.Struct({ seq: Schema.String }),
      execute: ({ id, orgId }) => sql`SELECT seq FROM webhook_deliveries WHERE id = ${id} AND org_id = ${orgId}`
    })

    const listDeliveries = SqlSchema.findAll({
      Request: Schema.Struct({
        orgId: Schema.String,
        endpointId: Schema.NullOr(Schema.String),
        status: Schema.NullOr(DeliveryStatus),
        beforeSeq: Schema.NullOr(Schema.String),
        limit: Schema.Number
      }),
      Result: DeliveryRow,
      execute: ({ beforeSeq, endpointId, limit, orgId, status }) =>
        sql`
          SELECT ${deliveryColumns} FROM webhook_deliveries d JOIN events e ON e.id = d.event_id
          WHERE d.org_id = ${orgId}
            ${endpointId === null ? sql`` : sql`AND d.endpoint_id = ${endpointId}`}
            ${status === null ? sql`` : sql`AND d.status = ${status}`}
            ${beforeSeq === null ? sql`` : sql`AND d.seq < ${beforeSeq}`}
          ORDER BY d.seq DESC
          LIMIT ${limit}`
    })

    const findDelivery = SqlSchema.single({
      Request: Schema.String,
      Result: DeliveryRow,
      execute: (id) =>
        sql`SELECT ${deliveryColumns} FROM webhook_deliveries d JOIN events e ON e.id = d.event_id WHERE d.id = ${id}`
    })

    const findLeased = SqlSchema.findOne({
      Request: Schema.Struct({ id: Schema.String, leaseToken: Schema.String }),
      Result: ClaimedDelivery,
      execute: ({ id, leaseToken }) =>
        sql`
          SELECT d.id, d.endpoint_id, d.attempts, d.lease_token, d.event_id, e.type AS event_type,
                 e.data AS event_data, e.created_at AS event_created_at, w.url, w.secret_enc, w.previous_secret_enc,
                 w.previous_secret_expires_at, d.replayed_at
          FROM webhook_deliveries d JOIN events e ON e.id = d.event_id JOIN webhook_endpoints w ON w.id = d.endpoint_id
          WHERE d.id = ${id} AND d.lease_token = ${leaseToken} AND d.status = 'pending'`
    })

    return {
      endpointCount,
      insertEndpoint,
      listEndpoints,
      findEndpoint,
      markDeleted,
      rotateSecret,
      replayDeliveries,
      failPendingDeliveries,
      insertLeasedDelivery,
      findDeliverySeq,
      listDeliveries,
      findDelivery,
      findLeased
    } as const
  })
}) {}
