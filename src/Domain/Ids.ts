import { Schema } from "effect"

/**
 * Identifiers: record ids are UUIDs, branded by the record they name, so a hold id cannot be
 * passed where an org id is expected. Ids are branded where they enter: a row decoded by its
 * repository's schema, or a path id once its record was found (`OrgId.make(...)`).
 */
export const OrgId = Schema.String.pipe(Schema.brand("OrgId"))
export type OrgId = typeof OrgId.Type
export const AgentId = Schema.String.pipe(Schema.brand("AgentId"))
export type AgentId = typeof AgentId.Type
export const UserId = Schema.String.pipe(Schema.brand("UserId"))
export type UserId = typeof UserId.Type
export const HoldId = Schema.String.pipe(Schema.brand("HoldId"))
export type HoldId = typeof HoldId.Type

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i

/** A path id that is not a UUID is simply not found: check before it reaches SQL (PostgreSQL refuses a malformed uuid). */
export const isUuid = (value: string): boolean => UUID.test(value)
