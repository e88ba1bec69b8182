import { SqlClient } from "@effect/sql"
import { Clock, Config, Duration, Effect, Layer, Option, Schedule } from "effect"
import { randomUUID } from "node:crypto"
import type { WebhookDeliveryId } from "../../Domain/Ids.js"
import { AppConfig } from "../AppConfig.js"
import { runDispatcher } from "../Background/Dispatcher.js"
import { delayAfterTries, LEASE } from "../Background/DurableRetry.js"
import { toEnvelope } from "../Events/Events.js"
import { SecretBox } from "../SecretBox/SecretBox.js"
import { statementRows } from "../StatementRows.js"
import { policyFor } from "./AddressPolicy.js"
import { deliveryClaimStatement } from "./DeliveryClaim.js"
import { deliveryOutcomeWriter } from "./DeliveryOutcomes.js"
import { deliveryHeaders } from "./Signature.js"
import { postWebhook } from "./WebhookHttp.js"
import { ClaimedDelivery, WebhooksRepo } from "./WebhooksRepo.js"

/**
 * Webhook deliveries. A delivery is a row per (endpoint, event); a try is one signed POST.
 * A 2xx within 10 seconds delivers it; anything else is tried again after 1, 5, 15, 30, 60,
 * 120, 240, 480 and 480 minutes (ten tries). After the tenth, or when the next try would
 * fall more than 24 hours after the event, it is failed. The event id, body and envelope
 * are the same on every try; the signature's `t` is the time of the try.
 *
 * Rows are claimed with `FOR UPDATE SKIP LOCKED` and a lease token, so replicas never run
 * the same try at once, and a crash only delays a row until its lease ends.
 */
export const webhookRetrySchedule = Schedule.fromDelays(
  "1 minute",
  "5 minutes",
  "15 minutes",
  "30 minutes",
  "60 minutes",
  "120 minutes",
  "240 minutes",
  "480 minutes",
  "480 minutes"
)

export const DELIVERY_WINDOW = Duration.hours(24)

export class WebhookDelivery extends Effect.Service<WebhookDelivery>()("Webhooks/WebhookDelivery", {
  dependencies: [SecretBox.Default, WebhooksRepo.Default],
  scoped: Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const claimedRows = statementRows(ClaimedDelivery)
    const repo = yield* WebhooksRepo
    const box = yield* SecretBox
    const config = yield* AppConfig
    const policy = policyFor(config.isProduction)

    /** Takes up to `limit` due deliveries for one try each (`deliveryClaimStatement`). */
    const claim = (limit: number, busy: ReadonlyArray<readonly [string, number]> = [], perEndpoint = limit) =>
      Effect.gen(function*() {
        const now = yield* Clock.currentTimeMillis
        const statement = deliveryClaimStatement(sql, {
          at: new Date(now),
          limit,
          busy,
          perEndpoint,
          leaseUntil: new Date(now + Duration.toMillis(LEASE)),
          leaseToken: randomUUID()
        })
        return yield* claimedRows.all(statement)
      }).pipe(Effect.orDie)

    const writeOutcome = yield* deliveryOutcomeWriter(sql)

    /** Records the outcome of a try, guarded by the lease token (a stale worker changes nothing). */
    const record = (
      delivery: ClaimedDelivery,
      startedAt: number,
      outcome: { delivered: boolean; statusCode: number | null; error: string | null }
    ) =>
      Effect.gen(function*() {
        const now = yield* Clock.currentTimeMillis
        const tries = delivery.attempts + 1
        const tried = {
          id: delivery.id,
          leaseToken: delivery.lease_token,
          attempts: tries,
          lastAttemptAt: new Date(startedAt),
          lastStatusCode: outcome.statusCode
        }
        if (outcome.delivered) {
          return yield* writeOutcome({
            ...tried,
            status: "delivered",
            lastError: null,
            deliveredAt: new Date(now),
            nextAttemptAt: null
          })
        }
        const wait = yield* delayAfterTries(webhookRetrySchedule, tries, now)
        const next = Option.map(wait, (delay) => now + Duration.toMillis(delay))
        // A replayed delivery has its own window, from the replay.
        const deadline = (delivery.replayed_at ?? delivery.event_created_at).getTime() +
          Duration.toMillis(DELIVERY_WINDOW)
        const giveUp = Option.isNone(next) || next.value > deadline
        yield* writeOutcome({
          ...tried,
          status: giveUp ? "failed" : "pending",
          lastError: outcome.error,
          deliveredAt: null,
          nextAttemptAt: giveUp ? null : new Date(Option.getOrThrow(next))
        })
      }).pipe(Effect.orDie)

    /** One try of a claimed delivery: sign, POST, record. */
    const attempt = (delivery: ClaimedDelivery) =>
      Effect.gen(function*() {
        const startedAt = yield* Clock.currentTimeMillis
        const secret = yield* box.open(delivery.secret_enc).pipe(Effect.option)
        // The secret a rotation replaced signs too until its overlap ends.
        const previous = delivery.previous_secret_enc !== null && delivery.previous_secret_expires_at !== null &&
            delivery.previous_secret_expires_at.getTime() > startedAt
          ? yield* box.open(delivery.previous_secret_enc).pipe(Effect.option)
          : Option.none()
        if (Option.isNone(secret)) {
          return yield* record(delivery, startedAt, {
            delivered: false,
            statusCode: null,
            error: "Endpoint secret cannot be decrypted (SECRETS_ENCRYPTION_KEY changed?)"
          })
        }
        const body = JSON.stringify(toEnvelope({
          id: delivery.event_id,
          type: delivery.event_type,
          created_at: delivery.event_created_at,
          data: delivery.event_data
        }))
        const headers = deliveryHeaders({
          secrets: Option.isSome(previous) ? [secret.value, previous.value] : [secret.value],
          eventId: delivery.event_id,
          eventType: delivery.event_type,
          unixSeconds: Math.floor(startedAt / 1000),
          body
        })
        const outcome = yield* postWebhook({ url: delivery.url, headers, body, policy })
        yield* record(delivery, startedAt, outcome)
      })

    /**
     * Tries now a delivery its caller wrote already leased with `leaseToken` (the test
     * endpoint does, so no worker can take it first).
     */
    const attemptLeased = (deliveryId: string, leaseToken: string) =>
      Effect.gen(function*() {
        const leased = yield* repo.findLeased({ id: deliveryId, leaseToken }).pipe(Effect.orDie)
        if (leased._tag === "Some") yield* attempt(leased.value)
      })

    const find = (deliveryId: WebhookDeliveryId) => repo.findDelivery(deliveryId).pipe(Effect.orDie)

    return { claim, attempt, attemptLeased, find } as const
  })
}) {}

/** The delivery worker, scoped to the server: WEBHOOK_WORKER_CONCURRENCY tries at once per replica. */
export const WebhookWorkerLive = Layer.scopedDiscard(
  Effect.gen(function*() {
    const delivery = yield* WebhookDelivery
    const concurrency = Math.max(1, yield* Config.integer("WEBHOOK_WORKER_CONCURRENCY").pipe(Config.withDefault(64)))
    yield* runDispatcher({
      name: "webhook worker",
      concurrency,
      pollInterval: "500 millis",
      // One slow or dead endpoint may hold at most half of the slots.
      claim: (limit, busy) => delivery.claim(limit, busy, Math.max(1, Math.floor(concurrency / 2))),
      process: delivery.attempt,
      keyOf: (row) => row.endpoint_id
    })
  })
).pipe(Layer.provide(WebhookDelivery.Default))
