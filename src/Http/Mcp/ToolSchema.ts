import { JSONSchema, type Schema } from "effect"
import { withoutFiller } from "../OpenApi/Filler.js"

/**
 * A tool's input as the JSON Schema an MCP client hands its model: `type: "object"` at the
 * top, every `$ref` inlined (a client may not resolve `$defs`), and nothing that says
 * nothing: the schema library's refinement titles and descriptions (`maxLength(200)`), the
 * empty `required: []` and `properties: {}` of free-form objects.
 */
export interface ToolInputSchema {
  readonly type: "object"
  readonly properties?: Record<string, object>
  readonly required?: Array<string>
  readonly additionalProperties?: boolean
}

type Node = Record<string, unknown>

const isNode = (value: unknown): value is Node => typeof value === "object" && value !== null && !Array.isArray(value)

const inline = (node: unknown, defs: Node): unknown => {
  if (Array.isArray(node)) return node.map((entry) => inline(entry, defs))
  if (!isNode(node)) return node
  const { $ref, ...rest } = node
  const resolved: Node = typeof $ref === "string"
    ? { ...(inline(defs[$ref.replace("#/$defs/", "")], defs) as Node), ...rest }
    : rest
  const out: Node = {}
  for (const [key, value] of Object.entries(resolved)) out[key] = inline(value, defs)
  if (Array.isArray(out["required"]) && out["required"].length === 0) delete out["required"]
  if (isNode(out["properties"]) && Object.keys(out["properties"]).length === 0) delete out["properties"]
  return out
}

export const toolInputSchema = (schema: Schema.Schema.Any): ToolInputSchema => {
  const { $defs, $schema: _ignored, ...top } = JSONSchema.make(schema) as unknown as Node
  const inlined = inline(top, isNode($defs) ? $defs : {}) as Node
  return withoutFiller(inlined) as unknown as ToolInputSchema
}
