import { HttpApiEndpoint, HttpApiGroup, OpenApi } from "@effect/platform"
import { Schema } from "effect"
import { EventTypeSchema, WebhookEvent } from "../../Domain/Events.js"
import { Forbidden } from "../../Errors/ApiErrors.js"
import { wire } from "../../Errors/Wire.js"
import { OrgAuth } from "../Security/AuthTags.js"
import { PageLimit } from "./Pagination.js"
import { OrgPath } from "./PathIds.js"

/** The org's events (with or without webhook endpoints) and its notification settings. */
export const EventList = Schema.Struct({ events: Schema.Array(WebhookEvent), has_more: Schema.Boolean })

export const EventQuery = Schema.Struct({
  type: Schema.optional(EventTypeSchema),
  limit: Schema.optional(PageLimit),
  starting_after: Schema.optional(Schema.UUID)
})

export const NotificationSettings = Schema.Struct({
  notifications: Schema.Struct({
    low_balance_usd: Schema.String.annotations({ description: "Low-balance alert in USD (3 decimals)" }),
    low_balance_credits: Schema.String
  })
}).annotations({ identifier: "NotificationSettings" })

export const NotificationUpdate = Schema.Struct({
  low_balance_usd: Schema.optional(Schema.Union(Schema.Number, Schema.String)).annotations({
    description: "USD amount, at most 3 decimals; balance.low is sent when the balance falls under it. Default 5."
  })
})

export class EventsGroup extends HttpApiGroup.make("events")
  .add(
    HttpApiEndpoint.get("list", "/v1/orgs/:orgId/events")
      .annotateContext(
        OpenApi.annotations({
          summary: "List events",
          description: "The org's events newest first, whether or not a webhook endpoint received them."
        })
      )
      .setPath(OrgPath)
      .setUrlParams(EventQuery)
      .addSuccess(EventList)
  )
  .add(
    HttpApiEndpoint.get("notifications", "/v1/orgs/:orgId/notifications")
      .annotateContext(
        OpenApi.annotations({
          summary: "Notification settings",
          description: "The low-balance alert threshold of the org."
        })
      )
      .setPath(OrgPath)
      .addSuccess(NotificationSettings)
  )
  .add(
    HttpApiEndpoint.put("setNotifications", "/v1/orgs/:orgId/notifications")
      .annotateContext(
        OpenApi.annotations({
          summary: "Change notification settings",
          description: "Sets the low-balance alert threshold (USD, at most three decimals)."
        })
      )
      .setPath(OrgPath)
      .setPayload(NotificationUpdate)
      .addSuccess(NotificationSettings)
      .addError(wire(Forbidden))
  )
  .middleware(OrgAuth)
  .annotateContext(OpenApi.annotations({
    title: "Events",
    description: "Recent events of the org, newest first, and who is mailed about them."
  }))
{}
