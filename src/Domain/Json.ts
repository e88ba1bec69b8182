import { Schema } from "effect"

/** Any JSON value, written out inline in the OpenAPI document (not as a shared `$id`, which Schema.Unknown repeats). */
export const AnyJson = Schema.Unknown.annotations({
  jsonSchema: {
    anyOf: [
      { type: "object" },
      { type: "array" },
      { type: "string" },
      { type: "number" },
      { type: "boolean" },
      { type: "null" }
    ]
  }
})
