import { SqlClient } from "@effect/sql"
import { Duration, Effect } from "effect"
import { randomUUID } from "node:crypto"
import type { OrgActor } from "../../Domain/Current.js"
import { type EventType, subscribableEventTypes } from "../../Domain/Events.js"
import { type EventId, WebhookDeliveryId, WebhookEndpointId } from "../../Domain/Ids.js"
import { commonLimits } from "../../Domain/Plans.js"
import { currentDate } from "../../Domain/Timestamps.js"
import type { DeliveryStatus } from "../../Domain/Webhook.js"
import { InvalidInput, NotFound, PlanLimit } from "../../Errors/ApiErrors.js"
import { AppConfig } from "../AppConfig.js"
import { requireOwner } from "../Auth/Roles.js"
import { LEASE } from "../Background/DurableRetry.js"
import { Events } from "../Events/Events.js"
import { SecretBox } from "../SecretBox/SecretBox.js"
import { WebhookDelivery } from "./Delivery.js"
import { newWebhookSecret } from "./Signature.js"
import { WebhooksRepo } from "./WebhooksRepo.js"
import { checkWebhookUrl } from "./WebhookUrl.js"

/**
 * Webhook endpoints of an org: made and removed by owners (sessions or their write keys),
 * read by members. The signing secret is shown once, in the create answer, and kept
 * encrypted; deliveries are listed for members.
 */
export const webhookNote =
  "The secret is shown only now: store it with your receiver. Verify every delivery's Service-Signature " +
  "(HMAC-SHA256 of \"<t>.<raw body>\") with it, or its webhook-signature with any Standard Webhooks library; " +
  "reject a t more than 5 minutes off, and drop repeated event ids."

/** How long a rotated-out secret still signs deliveries: the 24 hours a delivery is retried. */
export const SECRET_OVERLAP = Duration.hours(24)

export const rotationNote =
  "The new secret is shown only now. For 24 hours every delivery is signed with both the new and the previous " +
  "secret (two v1 entries in Service-Signature and in webhook-signature); switch your receiver to the new one " +
  "within that time."

/** Replays an owner may ask for per org and hour, and deliveries one replay resends at most. */
export const replayPolicy = { name: "webhook-replay", limit: 20, windowSeconds: 3600 } as const
export const REPLAY_MAX_DELIVERIES = 1000

export interface ReplayRequest {
  readonly event_id?: EventId | undefined
  readonly since?: Date | undefined
  readonly only_failed?: boolean | undefined
}

export interface DeliveryListQuery {
  readonly limit: number
  readonly startingAfter?: WebhookDeliveryId | undefined
  readonly webhookId?: WebhookEndpointId | undefined
  readonly status?: DeliveryStatus | undefined
}

export class Webhooks extends Effect.Service<Webhooks>()("Webhooks/Webhooks", {
  dependencies: [SecretBox.Default, WebhookDelivery.Default, WebhooksRepo.Default],
  effect: Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const repo = yield* WebhooksRepo
    const box = yield* SecretBox
    const events = yield* Events
    const delivery = yield* WebhookDelivery
    const config = yield* AppConfig

    const checkEventTypes = (requested: ReadonlyArray<string> | undefined) =>
      Effect.gen(function*() {
        const unique = [...new Set(requested ?? [])]
        for (const type of unique) {
          if (type === "webhook.test") {
            return yield* new InvalidInput({
              message: "webhook.test cannot be subscribed to: it is sent by POST /webhooks/{id}/test to that endpoint"
            })
          }
          if (!(subscribableEventTypes as ReadonlyArray<string>).includes(type)) {
            return yield* new InvalidInput({
              message: `Unknown event type ${JSON.stringify(type)}; one of: ${subscribableEventTypes.join(", ")}`
            })
          }
        }
        // Keep the catalogue's order so the stored list reads the same however it was sent.
        return subscribableEventTypes.filter((type) => unique.includes(type)) as ReadonlyArray<EventType>
      })

    const create = (
      actor: OrgActor,
      input: { readonly url: string; readonly events?: ReadonlyArray<string> | undefined }
    ) =>
      Effect.gen(function*() {
        yield* requireOwner(actor)
        const types = yield* checkEventTypes(input.events)
        const url = yield* checkWebhookUrl(input.url, { isProduction: config.isProduction })
        const secret = newWebhookSecret()
        const sealed = yield* box.seal(secret)
        const row = yield* Effect.gen(function*() {
          yield* sql`SELECT id FROM orgs WHERE id = ${actor.org_id} FOR UPDATE`
          if ((yield* repo.endpointCount(actor.org_id)) >= commonLimits.webhook_endpoints_per_org) {
            return yield* new PlanLimit({
              message:
                `An org may have at most ${commonLimits.webhook_endpoints_per_org} webhook endpoints; delete one first`
            })
          }
          return yield* repo.insertEndpoint({
            id: WebhookEndpointId.make(randomUUID()),
            org_id: actor.org_id,
            url,
            events: types,
            secret_enc: sealed,
            secret_prefix: secret.slice(0, 12),
            created_at: yield* currentDate
          })
        }).pipe(
          sql.withTransaction,
          Effect.catchTags({ SqlError: Effect.die, ParseError: Effect.die, NoSuchElementException: Effect.die })
        )
        return { webhook: { ...row, secret }, note: webhookNote }
      })

    const list = (actor: OrgActor) =>
      Effect.gen(function*() {
        const rows = yield* repo.listEndpoints(actor.org_id).pipe(Effect.orDie)
        return { webhooks: rows, event_types: [...subscribableEventTypes] }
      })

    /** Removes an endpoint; its pending deliveries end as failed. Unknown or already removed: 404. */
    const remove = (actor: OrgActor, webhookId: WebhookEndpointId) =>
      Effect.gen(function*() {
        yield* requireOwner(actor)
        const at = yield* currentDate
        const removed = yield* Effect.gen(function*() {
          const deleted = yield* repo.markDeleted({ orgId: actor.org_id, id: webhookId, at })
          if (deleted._tag === "None") return false
          yield* repo.failPendingDeliveries(webhookId)
          return true
        }).pipe(sql.withTransaction, Effect.orDie)
        if (!removed) return yield* new NotFound({ message: "No such webhook endpoint" })
        return { id: webhookId, status: "deleted" as const }
      })

    /**
     * A new signing secret, shown once; the previous one keeps signing (beside it) for
     * SECRET_OVERLAP, so a receiver can switch without losing a delivery.
     */
    const rotateSecret = (actor: OrgActor, webhookId: WebhookEndpointId) =>
      Effect.gen(function*() {
        yield* requireOwner(actor)
        const secret = newWebhookSecret()
        const at = yield* currentDate
        const rotated = yield* repo.rotateSecret({
          orgId: actor.org_id,
          id: webhookId,
          sealed: yield* box.seal(secret),
          secretPrefix: secret.slice(0, 12),
          previousUntil: new Date(at.getTime() + Duration.toMillis(SECRET_OVERLAP))
        }).pipe(Effect.orDie)
        if (rotated._tag === "None") return yield* new NotFound({ message: "No such webhook endpoint" })
        return { webhook: { ...rotated.value, secret }, note: rotationNote }
      })

    /**
     * Resends one event, or the endpoint's events since a time (only those that failed, or
     * all), as they were: same event ids and bodies, so receivers drop what they already had.
     * Each starts its tries and 24-hour window again now.
     */
    const replay = (actor: OrgActor, webhookId: WebhookEndpointId, request: ReplayRequest) =>
      Effect.gen(function*() {
        yield* requireOwner(actor)
        if ((request.event_id === undefined) === (request.since === undefined)) {
          return yield* new InvalidInput({
            message: "Give either `event_id` (one event) or `since` (every event since)"
          })
        }
        if (request.event_id !== undefined && request.only_failed !== undefined) {
          return yield* new InvalidInput({ message: "`only_failed` goes with `since`" })
        }
        const endpoint = yield* repo.findEndpoint({ orgId: actor.org_id, id: webhookId }).pipe(Effect.orDie)
        if (endpoint._tag === "None") return yield* new NotFound({ message: "No such webhook endpoint" })
        const replayed = yield* repo.replayDeliveries({
          orgId: actor.org_id,
          endpointId: webhookId,
          eventId: request.event_id ?? null,
          since: request.since ?? null,
          onlyFailed: request.only_failed ?? false,
          limit: REPLAY_MAX_DELIVERIES,
          now: yield* currentDate
        }).pipe(Effect.orDie)
        if (request.event_id !== undefined && replayed.length === 0) {
          return yield* new NotFound({
            message: "This endpoint has no delivery of that event, or its try is running now"
          })
        }
        return { replayed: replayed.length, event_ids: replayed.map((row) => row.event_id) }
      })

    /** Emits `webhook.test` for this endpoint only, tries it at once and answers the delivery. */
    const sendTest = (actor: OrgActor, webhookId: WebhookEndpointId) =>
      Effect.gen(function*() {
        yield* requireOwner(actor)
        const deliveryId = WebhookDeliveryId.make(randomUUID())
        const leaseToken = randomUUID()
        const found = yield* Effect.gen(function*() {
          const endpoint = yield* repo.findEndpoint({ orgId: actor.org_id, id: webhookId })
          if (endpoint._tag === "None") return false
          const event = yield* events.emit(actor.org_id, {
            type: "webhook.test",
            data: { message: "Test delivery requested from the webhook settings" }
          })
          // Written already leased to this request, so it is tried here and now, not by a worker.
          yield* repo.insertLeasedDelivery({
            id: deliveryId,
            orgId: actor.org_id,
            endpointId: webhookId,
            eventId: event.id,
            at: event.created_at,
            leaseUntil: new Date(event.created_at.getTime() + Duration.toMillis(LEASE)),
            leaseToken
          })
          return true
        }).pipe(sql.withTransaction, Effect.orDie)
        if (!found) return yield* new NotFound({ message: "No such webhook endpoint" })
        yield* delivery.attemptLeased(deliveryId, leaseToken)
        return yield* delivery.find(deliveryId)
      })

    const deliveries = (actor: OrgActor, query: DeliveryListQuery) =>
      Effect.gen(function*() {
        let before: string | null = null
        if (query.startingAfter !== undefined) {
          const cursor = yield* repo.findDeliverySeq({ orgId: actor.org_id, id: query.startingAfter }).pipe(
            Effect.orDie
          )
          if (cursor._tag === "None") {
            return yield* new InvalidInput({ message: "starting_after is not a delivery of this org" })
          }
          before = cursor.value.seq
        }
        const rows = yield* repo.listDeliveries({
          orgId: actor.org_id,
          endpointId: query.webhookId ?? null,
          status: query.status ?? null,
          beforeSeq: before,
          limit: query.limit + 1
        }).pipe(Effect.orDie)
        return { deliveries: rows.slice(0, query.limit), has_more: rows.length > query.limit }
      })

    return { create, list, remove, rotateSecret, replay, sendTest, deliveries } as const
  })
}) {}
