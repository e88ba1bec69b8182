import { Model } from "@effect/sql"
import { Schema } from "effect"
import { EventTypeSchema } from "./Events.js"
import { EventId, OrgId, WebhookDeliveryId, WebhookEndpointId } from "./Ids.js"
import { LaterTimestampColumn, TimestampColumn, TimestampFromDate } from "./Timestamps.js"

/**
 * A webhook endpoint, declared once: `WebhookEndpoint` decodes its row, `.insert` is a new
 * row (with the sealed signing secret), `.json` the wire record (timestamps ISO 8601; the
 * org and the sealed secrets stay off the wire). A rotation and a removal are statements
 * of their own (`WebhooksRepo`).
 */
export class WebhookEndpoint extends Model.Class<WebhookEndpoint>("WebhookEndpoint")({
  id: Model.GeneratedByApp(WebhookEndpointId),
  org_id: Model.FieldExcept("json", "jsonCreate", "jsonUpdate")(OrgId),
  url: Schema.String,
  /** A text[] column: empty means every event type. */
  events: Schema.Array(EventTypeSchema),
  secret_enc: Model.FieldOnly("insert")(Schema.String),
  secret_prefix: Schema.String,
  previous_secret_expires_at: Model.Field({
    select: Schema.NullOr(Schema.DateFromSelf),
    json: Schema.NullOr(TimestampFromDate).annotations({
      description: "After a secret rotation: until when deliveries are also signed with the previous secret"
    })
  }),
  created_at: TimestampColumn
}) {}

/** The wire's webhook endpoint. */
export const WebhookEndpointJson = WebhookEndpoint.json.annotations({ identifier: "WebhookEndpoint", title: undefined })

export const DeliveryStatus = Schema.Literal("pending", "delivered", "failed")
export type DeliveryStatus = typeof DeliveryStatus.Type

/**
 * A webhook delivery (one event to one endpoint) as read with its event's type: the row
 * decodes to `Delivery`, `.json` is the wire record (the endpoint as `webhook_id`; the org
 * and the list cursor `seq` stay off the wire). Deliveries are written by statements of
 * their own (`Events.emit`, the test delivery, the worker's outcomes), never from a record.
 */
export class Delivery extends Model.Class<Delivery>("WebhookDelivery")({
  id: Model.GeneratedByApp(WebhookDeliveryId),
  org_id: Model.FieldExcept("json", "jsonCreate", "jsonUpdate")(OrgId),
  endpoint_id: Model.Field({
    select: WebhookEndpointId,
    insert: WebhookEndpointId,
    json: Schema.propertySignature(WebhookEndpointId).pipe(Schema.fromKey("webhook_id"))
  }),
  event_id: EventId,
  /** From the delivery's event. */
  event_type: EventTypeSchema,
  status: DeliveryStatus,
  attempts: Schema.Int,
  last_status_code: Schema.NullOr(Schema.Int),
  last_error: Schema.NullOr(Schema.String),
  next_attempt_at: Model.Field({
    select: Schema.NullOr(Schema.DateFromSelf),
    json: Schema.NullOr(TimestampFromDate).annotations({ description: "Time of the next try; null when settled" })
  }),
  last_attempt_at: LaterTimestampColumn,
  delivered_at: LaterTimestampColumn,
  created_at: TimestampColumn,
  /** The list's order and cursor (a bigserial, read as text). */
  seq: Model.FieldOnly("select")(Schema.String)
}) {}

/** The wire's webhook delivery. */
export const DeliveryJson = Delivery.json.annotations({ identifier: "WebhookDelivery", title: undefined })
