import { HttpApiBuilder } from "@effect/platform"
import { Effect } from "effect"
import { CurrentActor } from "../../Domain/Current.js"
import { RateLimiter } from "../../Services/RateLimiter/RateLimiter.js"
import { replayPolicy, Webhooks } from "../../Services/Webhooks/Webhooks.js"
import { Api } from "../Api.js"
import { enforceRateLimit } from "../Middleware/RateLimits.js"

export const DEFAULT_LIMIT = 50

export const WebhooksHandlers = HttpApiBuilder.group(Api, "webhooks", (handlers) =>
  Effect.gen(function*() {
    const webhooks = yield* Webhooks
    const limiter = yield* RateLimiter
    return handlers
      .handle("create", ({ payload }) => Effect.flatMap(CurrentActor, (actor) => webhooks.create(actor, payload)))
      .handle("list", () => Effect.flatMap(CurrentActor, webhooks.list))
      .handle("remove", ({ path }) => Effect.flatMap(CurrentActor, (actor) => webhooks.remove(actor, path.id)))
      .handle("rotateSecret", ({ path }) =>
        Effect.flatMap(CurrentActor, (actor) => webhooks.rotateSecret(actor, path.id)))
      .handle("replay", ({ path, payload }) =>
        Effect.gen(function*() {
          const actor = yield* CurrentActor
          yield* enforceRateLimit(limiter, replayPolicy, `org:${actor.org_id}`)
          return yield* webhooks.replay(actor, path.id, payload)
        }))
      .handle("test", ({ path }) =>
        Effect.flatMap(CurrentActor, (actor) => webhooks.sendTest(actor, path.id)))
      .handle("deliveries", ({ urlParams }) =>
        Effect.flatMap(CurrentActor, (actor) =>
          webhooks.deliveries(actor, {
            limit: urlParams.limit ?? DEFAULT_LIMIT,
            startingAfter: urlParams.starting_after,
            webhookId: urlParams.webhook_id,
            status: urlParams.status
          })))
  }))
