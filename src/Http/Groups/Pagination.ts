import { Schema } from "effect"

/**
 * The `limit` query parameter of every list: a whole number from 1 to 200, default 50.
 * Query parameters arrive as text; the document types it as the integer it stands for.
 */
export const PageLimit = Schema.NumberFromString.pipe(Schema.int(), Schema.between(1, 200)).annotations({
  description: "Items per page, 1 to 200 (default 50)",
  jsonSchema: { type: "integer", minimum: 1, maximum: 200, default: 50 }
})

/** `limit` with its default filled in. */
export const pageLimitOrDefault = Schema.optionalWith(PageLimit, { default: () => 50 })
