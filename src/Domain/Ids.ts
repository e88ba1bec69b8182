import { Option, Schema } from "effect"

/**
 * Identifiers: record ids are UUIDs, branded by the record they name, so a hold id cannot be
 * passed where an org id is expected. Ids are decoded where they enter: a path parameter by
 * its endpoint's schema (`Http/Groups/PathIds.ts`: a value that is not a UUID names no
 * record), a row by its repository's schema, other text with `idOrNull`. A new id made by the service is
 * `AgentId.make(randomUUID())`.
 */
const uuidOf = <const B extends string>(brand: B) => Schema.UUID.pipe(Schema.brand(brand))

export const OrgId = uuidOf("OrgId")
export type OrgId = typeof OrgId.Type
export const AgentId = uuidOf("AgentId")
export type AgentId = typeof AgentId.Type
export const UserId = uuidOf("UserId")
export type UserId = typeof UserId.Type
export const AdminId = uuidOf("AdminId")
export type AdminId = typeof AdminId.Type
export const OrgKeyId = uuidOf("OrgKeyId")
export type OrgKeyId = typeof OrgKeyId.Type
export const InviteId = uuidOf("InviteId")
export type InviteId = typeof InviteId.Type
export const OAuthConnectionId = uuidOf("OAuthConnectionId")
export type OAuthConnectionId = typeof OAuthConnectionId.Type
export const DeletionRequestId = uuidOf("DeletionRequestId")
export type DeletionRequestId = typeof DeletionRequestId.Type
export const BenchmarkRunId = uuidOf("BenchmarkRunId")
export type BenchmarkRunId = typeof BenchmarkRunId.Type
export const OpeningRequestId = uuidOf("OpeningRequestId")
export type OpeningRequestId = typeof OpeningRequestId.Type
export const ApprovalId = uuidOf("ApprovalId")
export type ApprovalId = typeof ApprovalId.Type
export const WebhookEndpointId = uuidOf("WebhookEndpointId")
export type WebhookEndpointId = typeof WebhookEndpointId.Type
export const WebhookDeliveryId = uuidOf("WebhookDeliveryId")
export type WebhookDeliveryId = typeof WebhookDeliveryId.Type
export const EventId = uuidOf("EventId")
export type EventId = typeof EventId.Type
export const JobId = uuidOf("JobId")
export type JobId = typeof JobId.Type
export const ReceiptId = uuidOf("ReceiptId")
export type ReceiptId = typeof ReceiptId.Type
export const ReceiptItemId = uuidOf("ReceiptItemId")
export type ReceiptItemId = typeof ReceiptItemId.Type
export const DisputeId = uuidOf("DisputeId")
export type DisputeId = typeof DisputeId.Type
export const CallId = uuidOf("CallId")
export type CallId = typeof CallId.Type
export const PaymentId = uuidOf("PaymentId")
export type PaymentId = typeof PaymentId.Type

/** The ledger's holds: made by the ledger, named by the records that pay with them. */
export const HoldId = uuidOf("HoldId")
export type HoldId = typeof HoldId.Type

/** An entry of the ledger (written by the ledger only, never named on the wire). */
export const LedgerEntryId = uuidOf("LedgerEntryId")
export type LedgerEntryId = typeof LedgerEntryId.Type

/**
 * An id decoded from text that came from outside without a schema of its own (a route's raw
 * parameter read by a middleware, a form field, an outside party's metadata): `null` when
 * the text is absent or is not such an id, which then names no record.
 */
export const idOrNull = <A>(id: Schema.Schema<A, string>, text: string | null | undefined): A | null =>
  text === null || text === undefined ? null : Option.getOrNull(Schema.decodeUnknownOption(id)(text))
