/**
 * Removes the descriptions the schema library writes for its own refinements ("a string
 * at most 2000 character(s) long", "a number between 1 and 200", ...): they restate the
 * schema's keywords, which clients read anyway. Titles such as `between(1, 200)` go too.
 */
const FILLER = [
  /^an? (non[- ]empty |non-negative |positive )?(string|number|integer|bigint)\b/,
  /^an? (string|number) (matching|between|at (most|least)|to be decoded|that will be|less|greater)/,
  /^a Universally Unique Identifier$/
]

export const isFillerDescription = (text: string): boolean => FILLER.some((pattern) => pattern.test(text))

/** Titles the schema library derives from a refinement's name, e.g. `between(1, 200)`. */
const GENERATED_TITLE = /^[a-zA-Z]+\(.*\)$|^(int|nonNegative|positive|trimmed|nonEmptyString|unknown)$/i

const strip = (node: unknown, ownKey: string | undefined, isResponse: boolean): void => {
  if (Array.isArray(node)) {
    for (const entry of node) strip(entry, undefined, false)
    return
  }
  if (node === null || typeof node !== "object") return
  const record = node as Record<string, unknown>
  const description = record["description"]
  if (typeof description === "string" && isFillerDescription(description)) {
    // A response object must keep a description.
    if (isResponse) record["description"] = "Success"
    else delete record["description"]
  }
  if (typeof record["title"] === "string" && GENERATED_TITLE.test(record["title"])) delete record["title"]
  for (const [key, value] of Object.entries(record)) strip(value, key, ownKey === "responses")
}

export const withoutFiller = (spec: Record<string, any>): Record<string, any> => {
  strip(spec, undefined, false)
  return spec
}
