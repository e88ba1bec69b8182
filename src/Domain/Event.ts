import { Model } from "@effect/sql"
import { Schema } from "effect"
import { EventTypeSchema } from "./Events.js"
import { EventId, OrgId } from "./Ids.js"

/**
 * An event as stored: `Event` decodes its row, `Event.insert` is a new one (its data, already
 * checked against its type's schema, written as JSON text to the jsonb column). The wire's
 * envelope is not a variant of it: `WebhookEvent` (Domain/Events.ts) is a union with each
 * type's own data schema, which one row schema cannot say; `Events.toEnvelope` builds it.
 */
export class Event extends Model.Class<Event>("Event")({
  id: Model.GeneratedByApp(EventId),
  org_id: OrgId,
  type: EventTypeSchema,
  data: Model.Field({ select: Schema.Unknown, insert: Schema.parseJson(Schema.Unknown) }),
  created_at: Model.Field({ select: Schema.DateFromSelf, insert: Schema.DateFromSelf }),
  /** The list's order and cursor (a bigserial, read as text). */
  seq: Model.FieldOnly("select")(Schema.String)
}) {}
