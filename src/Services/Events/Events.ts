import { SqlClient, SqlSchema } from "@effect/sql"
import { Clock, DateTime, Effect, Option, Schema } from "effect"
import { randomUUID } from "node:crypto"
import { Event } from "../../Domain/Event.js"
import {
  type EventInput,
  type EventType,
  eventTypes,
  EventTypeSchema,
  isEmailedEventType,
  type WebhookEvent
} from "../../Domain/Events.js"
import { EventId, OrgId } from "../../Domain/Ids.js"
import { InvalidInput } from "../../Errors/ApiErrors.js"
import { AppConfig } from "../AppConfig.js"
import { AuthConfig } from "../Auth/AuthConfig.js"
import { MailOutbox } from "../Mailer/MailOutbox.js"
import { MailOutboxLive } from "../Mailer/MailOutboxLive.js"
import { OrgOwners } from "../Mailer/OrgOwners.js"
import { renderOwnerMail } from "../Mailer/OwnerMail.js"

/**
 * The wire's envelope of a stored event, as listed and as delivered (its data already
 * checked against its type when emitted).
 */
export const toEnvelope = (event: Pick<Event, "id" | "type" | "data" | "created_at">): WebhookEvent =>
  ({
    id: event.id,
    type: event.type,
    created_at: DateTime.formatIso(DateTime.unsafeMake(event.created_at)),
    data: event.data
  }) as WebhookEvent

export interface EventListQuery {
  readonly type?: EventType | undefined
  readonly limit: number
  /** An event's id as the envelope gives it (an unbranded UUID). */
  readonly startingAfter?: string | undefined
}

/**
 * The event store and its outbox. `emit` runs inside the transaction of the change that
 * causes the event (it opens a savepoint of its own, so the event, its deliveries and its
 * owner mails are written together or not at all):
 * - the event row;
 * - one pending delivery per live webhook endpoint of the org that subscribes to the type
 *   (an endpoint with no list gets every type; `webhook.test` goes only to the endpoint
 *   being tested, see Webhooks.sendTest);
 * - for the types marked "emailed to owners", one queued mail per owner of the org.
 * Workers send the deliveries and the mails afterwards, so none is lost to a crash.
 */
export class Events extends Effect.Service<Events>()("Events/Events", {
  effect: Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const outbox = yield* MailOutbox
    const owners = yield* OrgOwners
    const config = yield* AppConfig
    const baseUrl = Option.getOrElse(config.baseUrl, () => `http://localhost:${config.port}`)
    const { dashboardPath } = yield* AuthConfig

    const insertRow = SqlSchema.single({
      Request: Event.insert,
      Result: Event,
      execute: (row) => sql`INSERT INTO events ${sql.insert(row)} RETURNING id, org_id, type, data, created_at, seq`
    })
    const findSeq = SqlSchema.findOne({
      Request: Schema.Struct({ orgId: OrgId, id: Schema.UUID }),
      Result: Schema.Struct({ seq: Schema.String }),
      execute: ({ id, orgId }) => sql`SELECT seq FROM events WHERE id = ${id} AND org_id = ${orgId}`
    })
    const listPage = SqlSchema.findAll({
      Request: Schema.Struct({
        orgId: OrgId,
        type: Schema.NullOr(EventTypeSchema),
        beforeSeq: Schema.NullOr(Schema.String),
        limit: Schema.Number
      }),
      Result: Event,
      execute: ({ beforeSeq, limit, orgId, type }) =>
        sql`
          SELECT id, org_id, type, data, created_at, seq FROM events
          WHERE org_id = ${orgId}
            ${type === null ? sql`` : sql`AND type = ${type}`}
            ${beforeSeq === null ? sql`` : sql`AND seq < ${beforeSeq}`}
          ORDER BY seq DESC
          LIMIT ${limit}`
    })

    const insertEvent = (orgId: string, event: EventInput) =>
      Effect.gen(function*() {
        const data = yield* Schema.encode(eventTypes[event.type].data as Schema.Schema<unknown, unknown>)(event.data)
          .pipe(Effect.orDie)
        const now = new Date(yield* Clock.currentTimeMillis)
        return yield* insertRow(
          Event.insert.make({
            id: EventId.make(randomUUID()),
            org_id: OrgId.make(orgId),
            type: event.type,
            data,
            created_at: now
          })
        )
      })

    const mailOwners = (orgId: string, event: EventInput, row: Event) =>
      Effect.gen(function*() {
        if (!isEmailedEventType(event.type)) return
        for (const owner of yield* owners.of(orgId)) {
          const mail = renderOwnerMail(event.type, event.data as never, {
            orgId,
            orgName: owner.org_name,
            baseUrl,
            dashboardUrl: `${baseUrl}${dashboardPath}`,
            eventId: row.id
          })
          yield* outbox.enqueue({ to: owner.email, ...mail, dedupeKey: `event:${row.id}:owner:${owner.user_id}` })
        }
      })

    /**
     * Writes one event for an org, its deliveries and its owner mails; the data is checked
     * against its type's schema. The org id is text while some callers (ledger, tools) hold
     * it unbranded.
     */
    const emit = (orgId: string, event: EventInput) =>
      Effect.gen(function*() {
        const row = yield* insertEvent(orgId, event)
        if (event.type !== "webhook.test") {
          yield* sql`
            INSERT INTO webhook_deliveries (id, org_id, endpoint_id, event_id, status, attempts, next_attempt_at, created_at)
            SELECT gen_random_uuid(), w.org_id, w.id, ${row.id}, 'pending', 0, ${row.created_at}, ${row.created_at}
            FROM webhook_endpoints w
            WHERE w.org_id = ${orgId} AND w.deleted_at IS NULL
              AND (cardinality(w.events) = 0 OR ${event.type} = ANY (w.events))`
        }
        yield* mailOwners(orgId, event, row)
        return row
      }).pipe(sql.withTransaction, Effect.orDie)

    /** The org's events, newest first. */
    const list = (orgId: OrgId, query: EventListQuery) =>
      Effect.gen(function*() {
        let before: string | null = null
        if (query.startingAfter !== undefined) {
          const cursor = yield* findSeq({ orgId, id: query.startingAfter }).pipe(Effect.orDie)
          if (cursor._tag === "None") {
            return yield* new InvalidInput({ message: "starting_after is not an event of this org" })
          }
          before = cursor.value.seq
        }
        const rows = yield* listPage({ orgId, type: query.type ?? null, beforeSeq: before, limit: query.limit + 1 })
          .pipe(Effect.orDie)
        return { events: rows.slice(0, query.limit).map(toEnvelope), has_more: rows.length > query.limit }
      })

    return { emit, list } as const
  }),
  dependencies: [MailOutboxLive, OrgOwners.Default, AuthConfig.Default]
}) {}
