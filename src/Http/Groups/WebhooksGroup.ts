import { HttpApiEndpoint, HttpApiGroup, OpenApi } from "@effect/platform"
import { Schema, Struct } from "effect"
import { EventTypeSchema, subscribableEventTypes } from "../../Domain/Events.js"
import { WebhookDeliveryId, WebhookEndpointId } from "../../Domain/Ids.js"
import { DeliveryJson, DeliveryStatus, WebhookEndpointJson } from "../../Domain/Webhook.js"
import { Forbidden, InvalidInput, NotFound, PlanLimit, RateLimited } from "../../Errors/ApiErrors.js"
import { wire } from "../../Errors/Wire.js"
import { OrgAuth } from "../Security/AuthTags.js"
import { PageLimit } from "./Pagination.js"
import { EventIdInBody, OrgIdParam, OrgPath, WebhookEndpointIdParam } from "./PathIds.js"

/** Webhook endpoints and their deliveries: `/v1/orgs/{orgId}/webhooks...`, `/webhook-deliveries`. */
const WebhookPath = Schema.Struct({ orgId: OrgIdParam, id: WebhookEndpointIdParam })

export const CreateWebhookRequest = Schema.Struct({
  url: Schema.String.annotations({
    description: "https URL of a public address (in a local deployment also http://localhost or loopback)"
  }),
  events: Schema.optional(Schema.Array(Schema.String)).annotations({
    description: `Event types to receive; empty or omitted means every event. One of: ${
      subscribableEventTypes.join(", ")
    }`
  })
})

/** The wire's webhook endpoint: the `WebhookEndpoint` model's json variant (Domain/Webhook.ts). */
export const WebhookEndpoint = WebhookEndpointJson

export const RotatedWebhookSecret = Schema.Struct({
  webhook: Schema.Struct({
    ...WebhookEndpoint.fields,
    secret: Schema.String.annotations({ description: "The new whsec_...; shown only in this answer" })
  }),
  note: Schema.String
}).annotations({ identifier: "RotatedWebhookSecret" })

export const CreatedWebhook = Schema.Struct({
  webhook: Schema.Struct({
    id: WebhookEndpoint.fields.id,
    secret: Schema.String.annotations({ description: "whsec_...; shown only in this answer" }),
    ...Struct.pick(WebhookEndpoint.fields, "url", "events", "created_at")
  }),
  note: Schema.String
}).annotations({ identifier: "CreatedWebhook" })

export const WebhookList = Schema.Struct({
  webhooks: Schema.Array(WebhookEndpoint),
  event_types: Schema.Array(EventTypeSchema).annotations({ description: "The event types an endpoint can pick" })
})

export const ReplayRequest = Schema.Struct({
  event_id: Schema.optional(EventIdInBody.annotations({ description: "Resend this event" })),
  since: Schema.optional(Schema.Date.annotations({
    description: "Resend every event delivered (or tried) to this endpoint since this time (ISO 8601)"
  })),
  only_failed: Schema.optional(Schema.Boolean.annotations({
    description: "With `since`: only deliveries that failed (default: all)"
  }))
}).annotations({ identifier: "ReplayRequest" })

export const ReplayAnswer = Schema.Struct({
  replayed: Schema.Int.annotations({
    description: "Deliveries made due again (at most 1,000 a request, oldest first)"
  }),
  event_ids: Schema.Array(Schema.String).annotations({ description: "Their events: the same ids as before" })
}).annotations({ identifier: "ReplayAnswer" })

/** The wire's webhook delivery: the `Delivery` model's json variant (Domain/Webhook.ts). */
export const WebhookDelivery = DeliveryJson

export const DeliveryList = Schema.Struct({ deliveries: Schema.Array(WebhookDelivery), has_more: Schema.Boolean })

export const DeliveryQuery = Schema.Struct({
  limit: Schema.optional(PageLimit),
  starting_after: Schema.optional(WebhookDeliveryId),
  webhook_id: Schema.optional(WebhookEndpointId),
  status: Schema.optional(DeliveryStatus)
})

export class WebhooksGroup extends HttpApiGroup.make("webhooks")
  .add(
    HttpApiEndpoint.post("create", "/v1/orgs/:orgId/webhooks")
      .annotateContext(
        OpenApi.annotations({
          summary: "Add a webhook endpoint",
          description: "Registers an HTTPS address for the chosen event types; the signing secret is shown once."
        })
      )
      .setPath(OrgPath)
      .setPayload(CreateWebhookRequest)
      .addSuccess(CreatedWebhook, { status: 201 })
      .addError(wire(Forbidden))
      .addError(wire(PlanLimit))
  )
  .add(
    HttpApiEndpoint.get("list", "/v1/orgs/:orgId/webhooks")
      .annotateContext(
        OpenApi.annotations({
          summary: "List webhook endpoints",
          description: "The org's webhook endpoints with their event types (never the secret)."
        })
      ).setPath(OrgPath).addSuccess(WebhookList)
  )
  .add(
    HttpApiEndpoint.del("remove", "/v1/orgs/:orgId/webhooks/:id")
      .annotateContext(
        OpenApi.annotations({
          summary: "Remove a webhook endpoint",
          description: "Stops deliveries to the endpoint; pending ones are dropped."
        })
      )
      .setPath(WebhookPath)
      .addSuccess(Schema.Struct({ id: Schema.String, status: Schema.Literal("deleted") }))
      .addError(wire(Forbidden))
  )
  .add(
    HttpApiEndpoint.post("rotateSecret", "/v1/orgs/:orgId/webhooks/:id/rotate-secret")
      .annotateContext(
        OpenApi.annotations({
          summary: "Rotate a webhook endpoint's secret",
          description:
            "Makes a new signing secret, shown once. For 24 hours deliveries are signed with both the new and the previous secret (in `Service-Signature` and in the Standard Webhooks `webhook-signature`)."
        })
      )
      .setPath(WebhookPath)
      .addSuccess(RotatedWebhookSecret)
      .addError(wire(Forbidden))
  )
  .add(
    HttpApiEndpoint.post("replay", "/v1/orgs/:orgId/webhooks/:id/replay")
      .annotateContext(
        OpenApi.annotations({
          summary: "Replay webhook deliveries",
          description:
            "Resends one event (`event_id`), or every event of the endpoint since a time (`since`, `only_failed`), with the same event ids, so receivers drop what they already have. Owners; 20 replays an hour per org."
        })
      )
      .setPath(WebhookPath)
      .setPayload(ReplayRequest)
      .addSuccess(ReplayAnswer, { status: 202 })
      .addError(wire(Forbidden))
      .addError(wire(NotFound))
      .addError(wire(InvalidInput))
      .addError(wire(RateLimited))
  )
  .add(
    HttpApiEndpoint.post("test", "/v1/orgs/:orgId/webhooks/:id/test")
      .annotateContext(
        OpenApi.annotations({
          summary: "Send a test event",
          description: "Delivers a `webhook.test` event to the endpoint now and answers the delivery's result."
        })
      )
      .setPath(WebhookPath)
      .addSuccess(WebhookDelivery)
      .addError(wire(Forbidden))
  )
  .add(
    HttpApiEndpoint.get("deliveries", "/v1/orgs/:orgId/webhook-deliveries")
      .annotateContext(
        OpenApi.annotations({
          summary: "List webhook deliveries",
          description: "Deliveries newest first, with status, attempts and next try; filter by endpoint and status."
        })
      )
      .setPath(OrgPath)
      .setUrlParams(DeliveryQuery)
      .addSuccess(DeliveryList)
  )
  .middleware(OrgAuth)
  .annotateContext(OpenApi.annotations({
    title: "Webhooks",
    description: "Signed event deliveries to the org's endpoints (owner or write key to change; members read)."
  }))
{}
