/** Small helpers shared by the purchasing services. */

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i

/** Whether a value can be an identifier at all (anything else is simply not found). */
export const isUuid = (value: string): boolean => UUID.test(value)

export const isoOrNull = (value: Date | null): string | null => (value === null ? null : value.toISOString())
