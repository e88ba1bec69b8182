import { HttpApiBuilder } from "@effect/platform"
import { Effect } from "effect"
import { CurrentActor } from "../../Domain/Current.js"
import { Events } from "../../Services/Events/Events.js"
import { Notifications } from "../../Services/Notifications/Notifications.js"
import { Api } from "../Api.js"
import { DEFAULT_LIMIT } from "./WebhooksHandlers.js"

export const EventsHandlers = HttpApiBuilder.group(Api, "events", (handlers) =>
  Effect.gen(function*() {
    const events = yield* Events
    const notifications = yield* Notifications
    return handlers
      .handle("list", ({ urlParams }) =>
        Effect.flatMap(CurrentActor, (actor) =>
          events.list(actor.org_id, {
            type: urlParams.type,
            limit: urlParams.limit ?? DEFAULT_LIMIT,
            startingAfter: urlParams.starting_after
          })))
      .handle("notifications", () => Effect.flatMap(CurrentActor, notifications.get))
      .handle("setNotifications", ({ payload }) =>
        Effect.flatMap(CurrentActor, (actor) =>
          notifications.update(actor, { low_balance_usd: payload.low_balance_usd ?? 5 })))
  }))
