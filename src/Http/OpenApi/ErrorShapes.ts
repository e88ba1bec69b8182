/**
 * Fixes the OpenAPI entries of built-in failures: the platform documents request decoding
 * failures with its own schema, but the service answers them as 400 `invalid_input` in
 * the common error body, so the document says that instead.
 */
const builtInRef = "#/components/schemas/HttpApiDecodeError"
const invalidInputRef = "#/components/schemas/Error_invalid_input"
const builtInOnlySchemas = ["HttpApiDecodeError", "Issue", "PropertyKey"]

const rewrite = (node: unknown): unknown => {
  if (Array.isArray(node)) return node.map(rewrite)
  if (node === null || typeof node !== "object") return node
  const out: Record<string, unknown> = {}
  for (const [key, value] of Object.entries(node)) {
    if (key === "$ref" && value === builtInRef) {
      out[key] = invalidInputRef
    } else if (key === "anyOf" && Array.isArray(value)) {
      const seen = new Set<string>()
      out[key] = (value.map(rewrite) as Array<unknown>).filter((entry) => {
        const id = JSON.stringify(entry)
        if (seen.has(id)) return false
        seen.add(id)
        return true
      })
    } else {
      out[key] = rewrite(value)
    }
  }
  const anyOf = out["anyOf"]
  if (Array.isArray(anyOf) && anyOf.length === 1 && Object.keys(out).length === 1) return anyOf[0]
  return out
}

export const openApiErrorShapes = (spec: Record<string, any>): Record<string, any> => {
  const rewritten = rewrite(spec) as Record<string, any>
  const schemas = rewritten.components?.schemas ?? {}
  for (const name of builtInOnlySchemas) delete schemas[name]
  for (const path of Object.values<any>(rewritten.paths ?? {})) {
    for (const operation of Object.values<any>(path)) {
      const badRequest = operation?.responses?.["400"]
      if (badRequest) badRequest.description = "invalid_input: body or field missing or malformed"
    }
  }
  return rewritten
}
