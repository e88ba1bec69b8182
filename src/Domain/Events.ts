import { JSONSchema, Schema } from "effect"

/**
 * The ten event types of the specification, each with exactly its `data` fields. This
 * union is the single definition: the event store writes it, webhooks deliver it, and
 * the JSON Schema at `/schemas/webhook-event.json` is generated from it.
 */
const CreditsString = Schema.String.pipe(Schema.pattern(/^-?\d+$/)).annotations({
  description: "Whole credits as a string of digits"
})
const UsdString = Schema.String.pipe(Schema.pattern(/^-?\d+\.\d{3}$/)).annotations({
  description: "USD with three decimals"
})
const Timestamp = Schema.String.annotations({
  description: "ISO 8601 UTC with milliseconds",
  jsonSchema: { type: "string", format: "date-time" }
})
const DateOnly = Schema.String.pipe(Schema.pattern(/^\d{4}-\d{2}-\d{2}$/)).annotations({
  jsonSchema: { type: "string", format: "date", pattern: "^\\d{4}-\\d{2}-\\d{2}$" }
})
const Id = Schema.String

export const BalanceLowData = Schema.Struct({ balance_credits: CreditsString, balance_usd: UsdString })
export const Budget80pctData = Schema.Struct({
  agent_id: Id,
  agent_name: Schema.String,
  spent_credits: CreditsString,
  budget_credits: CreditsString
})
export const ApprovalRequestedData = Schema.Struct({
  approval_id: Id,
  agent_id: Id,
  tool_id: Id,
  item_count: Schema.Int,
  amount_credits: CreditsString,
  amount_usd: UsdString,
  reason: Schema.Literal("over_threshold", "over_budget"),
  expires_at: Timestamp
})
export const ApprovalDecidedData = Schema.Struct({
  approval_id: Id,
  agent_id: Id,
  status: Schema.Literal("approved", "rejected"),
  note: Schema.NullOr(Schema.String)
})
export const JobCompletedData = Schema.Struct({
  job_id: Id,
  status: Schema.String,
  receipt_id: Id,
  item_count: Schema.Int,
  passed: Schema.Int,
  expired: Schema.Int
})
export const ToolPausedData = Schema.Struct({ tool_id: Id, tool_name: Schema.String, reason: Schema.String })
export const DisputeDecidedData = Schema.Struct({
  dispute_id: Id,
  receipt_id: Id,
  item_index: Schema.Int,
  decision: Schema.Literal("upheld", "rejected"),
  refunded_credits: CreditsString,
  note: Schema.NullOr(Schema.String)
})
export const PriceChangedData = Schema.Struct({
  tool_id: Id,
  tool_name: Schema.String,
  old_credits: CreditsString,
  new_credits: CreditsString,
  valid_from: Timestamp
})
export const TrialExpiringData = Schema.Struct({ credits: CreditsString, expires_on: DateOnly })
export const WebhookTestData = Schema.Struct({ message: Schema.String })

/** Event type -> data schema, and whether owners are mailed about it. */
export const eventTypes = {
  "balance.low": { data: BalanceLowData, emailed: true },
  "budget.80pct": { data: Budget80pctData, emailed: true },
  "approval.requested": { data: ApprovalRequestedData, emailed: false },
  "approval.decided": { data: ApprovalDecidedData, emailed: false },
  "job.completed": { data: JobCompletedData, emailed: false },
  "tool.paused": { data: ToolPausedData, emailed: true },
  "dispute.decided": { data: DisputeDecidedData, emailed: true },
  "price.changed": { data: PriceChangedData, emailed: true },
  "trial.expiring": { data: TrialExpiringData, emailed: true },
  "webhook.test": { data: WebhookTestData, emailed: false }
} as const

export type EventType = keyof typeof eventTypes
export const eventTypeNames = Object.keys(eventTypes) as ReadonlyArray<EventType>
export const EventTypeSchema = Schema.Literal(...(eventTypeNames as [EventType, ...Array<EventType>]))
export const isEventType = Schema.is(EventTypeSchema)

export type EventData<T extends EventType> = (typeof eventTypes)[T]["data"]["Type"]

/** The types marked "emailed to owners" in the specification. */
export type EmailedEventType = {
  [T in EventType]: (typeof eventTypes)[T]["emailed"] extends true ? T : never
}[EventType]
export const isEmailedEventType = (type: EventType): type is EmailedEventType => eventTypes[type].emailed

/** The types an endpoint can subscribe to; `webhook.test` goes only to the endpoint it tests. */
export const subscribableEventTypes = eventTypeNames.filter((type) => type !== "webhook.test")

/** What a change asks to emit: a type and its data, before id and time are given. */
export type EventInput = { [T in EventType]: { readonly type: T; readonly data: EventData<T> } }[EventType]

const envelope = <T extends EventType>(type: T) =>
  Schema.Struct({
    id: Schema.UUID,
    type: Schema.Literal(type),
    created_at: Timestamp,
    data: eventTypes[type].data as (typeof eventTypes)[T]["data"]
  }).annotations({ identifier: `Event_${type.replace(".", "_")}`, title: type })

export const WebhookEvent = Schema.Union(
  envelope("balance.low"),
  envelope("budget.80pct"),
  envelope("approval.requested"),
  envelope("approval.decided"),
  envelope("job.completed"),
  envelope("tool.paused"),
  envelope("dispute.decided"),
  envelope("price.changed"),
  envelope("trial.expiring"),
  envelope("webhook.test")
).annotations({ identifier: "WebhookEvent", title: "Webhook event envelope" })
export type WebhookEvent = typeof WebhookEvent.Type

/** The document served at `/schemas/webhook-event.json`. */
export const webhookEventJsonSchema = (): object => ({
  ...JSONSchema.make(WebhookEvent),
  $id: "webhook-event.json",
  title: "Webhook event envelope"
})
