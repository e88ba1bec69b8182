import { Model, SqlClient, SqlSchema } from "@effect/sql"
import { Effect, Schema, Struct } from "effect"
import { Event } from "../../Domain/Event.js"
import { EventId, OrgId, WebhookDeliveryId, WebhookEndpointId } from "../../Domain/Ids.js"
import { Delivery, DeliveryStatus, WebhookEndpoint } from "../../Domain/Webhook.js"

/** A delivery taken for one try, with its event and endpoint: their fields as their records declare them. */
export const ClaimedDelivery = Schema.Struct({
  ...Struct.pick(Delivery.fields, "id", "endpoint_id", "attempts", "event_id", "event_type"),
  lease_token: Schema.String,
  event_data: Event.fields.data,
  event_created_at: Event.fields.created_at,
  ...Struct.pick(WebhookEndpoint.fields, "url", "previous_secret_expires_at"),
  secret_enc: Schema.String,
  previous_secret_enc: Schema.NullOr(Schema.String),
  replayed_at: Schema.NullOr(Schema.DateFromSelf)
})
export type ClaimedDelivery = typeof ClaimedDelivery.Type

const OrgEndpoint = Schema.Struct({ orgId: OrgId, id: WebhookEndpointId })
const Id = Schema.Struct({ id: WebhookEndpointId })

/**
 * Webhooks' SQL: endpoints (the `WebhookEndpoint` model), and deliveries with their event's
 * type (the `Delivery` model). The delivery worker's claim and outcome statements live with
 * it in Delivery.ts.
 */
export class WebhooksRepo extends Effect.Service<WebhooksRepo>()("Webhooks/WebhooksRepo", {
  effect: Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const deliveryColumns = sql`d.id, d.org_id, d.endpoint_id, d.event_id, e.type AS event_type, d.status, d.attempts,
      d.next_attempt_at, d.last_attempt_at, d.last_status_code, d.last_error, d.delivered_at, d.created_at, d.seq`
    const endpoints = yield* Model.makeRepository(WebhookEndpoint, {
      tableName: "webhook_endpoints",
      spanPrefix: "WebhooksRepo",
      idColumn: "id"
    })

    const countEndpoints = SqlSchema.single({
      Request: OrgId,
      Result: Schema.Struct({ n: Schema.Number }),
      execute: (orgId) =>
        sql`SELECT count(*)::int AS n FROM webhook_endpoints WHERE org_id = ${orgId} AND deleted_at IS NULL`
    })
    /** The org's endpoints not deleted. */
    const endpointCount = (orgId: OrgId) => Effect.map(countEndpoints(orgId), (row) => row.n)

    const listEndpoints = SqlSchema.findAll({
      Request: OrgId,
      Result: WebhookEndpoint,
      execute: (orgId) =>
        sql`
          SELECT * FROM webhook_endpoints
          WHERE org_id = ${orgId} AND deleted_at IS NULL
          ORDER BY created_at DESC, id`
    })

    const findEndpoint = SqlSchema.findOne({
      Request: OrgEndpoint,
      Result: Id,
      execute: ({ id, orgId }) =>
        sql`SELECT id FROM webhook_endpoints WHERE id = ${id} AND org_id = ${orgId} AND deleted_at IS NULL`
    })

    const markDeleted = SqlSchema.findOne({
      Request: Schema.Struct({ ...OrgEndpoint.fields, at: Schema.DateFromSelf }),
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
        ...OrgEndpoint.fields,
        sealed: Schema.String,
        secretPrefix: Schema.String,
        previousUntil: Schema.DateFromSelf
      }),
      Result: WebhookEndpoint,
      execute: (row) =>
        sql`
          UPDATE webhook_endpoints SET previous_secret_enc = secret_enc, previous_secret_expires_at = ${row.previousUntil},
            secret_enc = ${row.sealed}, secret_prefix = ${row.secretPrefix}
          WHERE id = ${row.id} AND org_id = ${row.orgId} AND deleted_at IS NULL
          RETURNING *`
    })

    /**
     * Deliveries of one endpoint made due again now, their tries counted from zero and their
     * window from now; one in flight (leased) is left to its try. Answers the events replayed.
     */
    const replayDeliveries = SqlSchema.findAll({
      Request: Schema.Struct({
        orgId: OrgId,
        endpointId: WebhookEndpointId,
        eventId: Schema.NullOr(EventId),
        since: Schema.NullOr(Schema.DateFromSelf),
        onlyFailed: Schema.Boolean,
        limit: Schema.Number,
        now: Schema.DateFromSelf
      }),
      Result: Schema.Struct({ event_id: EventId }),
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
    const failPendingDeliveries = (endpointId: WebhookEndpointId) =>
      sql`
        UPDATE webhook_deliveries
        SET status = 'failed', last_error = 'Endpoint deleted', next_attempt_at = NULL, lease_until = NULL,
            lease_token = NULL
        WHERE endpoint_id = ${endpointId} AND status = 'pending'`.pipe(Effect.asVoid)

    /** A delivery written already leased to its caller, so it is tried there and then, not by a worker. */
    const insertLeasedDelivery = (row: {
      readonly id: WebhookDeliveryId
      readonly orgId: OrgId
      readonly endpointId: WebhookEndpointId
      readonly eventId: EventId
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
      Request: Schema.Struct({ orgId: OrgId, id: WebhookDeliveryId }),
      Result: Schema.Struct({ seq: Schema.String }),
      execute: ({ id, orgId }) => sql`SELECT seq FROM webhook_deliveries WHERE id = ${id} AND org_id = ${orgId}`
    })

    const listDeliveries = SqlSchema.findAll({
      Request: Schema.Struct({
        orgId: OrgId,
        endpointId: Schema.NullOr(WebhookEndpointId),
        status: Schema.NullOr(DeliveryStatus),
        beforeSeq: Schema.NullOr(Schema.String),
        limit: Schema.Number
      }),
      Result: Delivery,
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
      Request: WebhookDeliveryId,
      Result: Delivery,
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
      insertEndpoint: endpoints.insert,
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
