/** Identifiers: record ids are UUIDs; a path id that is not one is simply not found. */
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i

/** Check before an id from a request reaches SQL (PostgreSQL refuses a malformed uuid). */
export const isUuid = (value: string): boolean => UUID.test(value)
