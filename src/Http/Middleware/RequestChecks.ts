/**
 * Checks every request passes at the edge before any handler or schema sees it, so bad
 * input answers 400 `invalid_input` naming the problem instead of failing deeper down
 * (PostgreSQL refuses NUL bytes; a deeply nested body overflows the stack while a decode
 * error is formatted; `1e999` parses to Infinity, which no amount can be).
 *
 * Each check returns the problem as a sentence, or undefined when the request is fine.
 */

/** Deepest nesting of arrays and objects accepted in a JSON body; our schemas need four. */
export const MAX_JSON_DEPTH = 64

/** The target's path and query: no NUL byte, and every percent-escape well formed. */
export const problemInTarget = (url: string): string | undefined => {
  const queryStart = url.indexOf("?")
  const parts: Array<[string, string]> = queryStart < 0
    ? [["path", url]]
    : [["path", url.slice(0, queryStart)], ["query", url.slice(queryStart + 1)]]
  for (const [name, raw] of parts) {
    let decoded: string
    try {
      decoded = decodeURIComponent(raw.replace(/\+/g, " "))
    } catch {
      return `The ${name} has a malformed percent-escape`
    }
    if (decoded.includes("\u0000")) return `The ${name} contains a NUL character`
  }
  return undefined
}

/** Whether the request announces a body (a length over zero, or a chunked transfer). */
export const announcesBody = (headers: Readonly<Record<string, string | undefined>>): boolean =>
  headers["transfer-encoding"] !== undefined || Number(headers["content-length"] ?? "0") > 0

const isJsonMediaType = (contentType: string): boolean => {
  const mediaType = contentType.split(";", 1)[0]!.trim().toLowerCase()
  return mediaType === "application/json" || (mediaType.startsWith("application/") && mediaType.endsWith("+json"))
}

const methodsWithBody = new Set(["POST", "PUT", "PATCH", "DELETE"])

/**
 * A body must be sent as JSON: a method that takes a body and announces one needs a JSON
 * Content-Type, and any Content-Type it names must be JSON (the platform would otherwise
 * try to read an empty multipart body). Says which Content-Type came instead.
 */
export const problemInContentType = (
  method: string,
  headers: Readonly<Record<string, string | undefined>>
): string | undefined => {
  if (!methodsWithBody.has(method.toUpperCase())) return undefined
  const contentType = headers["content-type"]
  if (contentType === undefined || contentType.trim() === "") {
    return announcesBody(headers) ? "Content-Type is missing; send the body as application/json" : undefined
  }
  if (!isJsonMediaType(contentType)) {
    return `Content-Type must be application/json, not ${contentType.split(";", 1)[0]!.trim()}`
  }
  return undefined
}

/** Nesting depth of a JSON text, counted without parsing it (brackets inside strings do not count). */
const exceedsDepth = (text: string, limit: number): boolean => {
  let depth = 0
  let inString = false
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i)
    if (inString) {
      if (c === 92) i++ // backslash: skip the escaped character
      else if (c === 34) inString = false
    } else if (c === 34) {
      inString = true
    } else if (c === 123 || c === 91) {
      if (++depth > limit) return true
    } else if (c === 125 || c === 93) {
      depth--
    }
  }
  return false
}

const pathName = (path: ReadonlyArray<string | number>): string => (path.length === 0 ? "body" : path.join("."))

/** The first NUL character or non-finite number in a parsed body, by field path. */
const problemInValue = (value: unknown, path: Array<string | number>): string | undefined => {
  if (typeof value === "string") {
    return value.includes("\u0000") ? `\`${pathName(path)}\` contains a NUL character` : undefined
  }
  if (typeof value === "number") {
    return Number.isFinite(value) ? undefined : `\`${pathName(path)}\` is a number too large to represent`
  }
  if (Array.isArray(value)) {
    for (let i = 0; i < value.length; i++) {
      const problem = problemInValue(value[i], [...path, i])
      if (problem !== undefined) return problem
    }
    return undefined
  }
  if (typeof value === "object" && value !== null) {
    for (const [key, inner] of Object.entries(value)) {
      if (key.includes("\u0000")) return `A field name in \`${pathName(path)}\` contains a NUL character`
      const problem = problemInValue(inner, [...path, key])
      if (problem !== undefined) return problem
    }
  }
  return undefined
}

/** A form body (`application/x-www-form-urlencoded`): no NUL in a field's name or value, once decoded. */
export const problemInFormBody = (text: string): string | undefined => {
  for (const [name, value] of new URLSearchParams(text)) {
    if (name.includes("\u0000")) return "A form field's name contains a NUL character"
    if (value.includes("\u0000")) return `Form field \`${name}\` contains a NUL character`
  }
  return undefined
}

/**
 * A body its handler reads itself (the authorization server's JSON registrations and form
 * posts): the checks of its own encoding. Another encoding is left to the handler, which
 * refuses it in its standard's words.
 */
export const problemInOwnBody = (
  headers: Readonly<Record<string, string | undefined>>,
  text: string
): string | undefined => {
  const contentType = headers["content-type"] ?? ""
  if (isJsonMediaType(contentType)) return problemInJsonBody(text)
  const mediaType = contentType.split(";", 1)[0]!.trim().toLowerCase()
  return mediaType === "application/x-www-form-urlencoded" ? problemInFormBody(text) : undefined
}

/** A JSON body: nesting within the limit, well formed, no NUL and no number out of range. */
export const problemInJsonBody = (text: string): string | undefined => {
  if (text.trim() === "") return undefined
  if (exceedsDepth(text, MAX_JSON_DEPTH)) {
    return `The JSON body is nested deeper than ${MAX_JSON_DEPTH} levels`
  }
  let value: unknown
  try {
    value = JSON.parse(text)
  } catch (error) {
    return `Malformed JSON body: ${(error as Error).message}`
  }
  return problemInValue(value, [])
}
