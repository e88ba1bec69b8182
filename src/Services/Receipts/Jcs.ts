import { hash } from "node:crypto"

/**
 * The JSON Canonicalization Scheme (RFC 8785): object members sorted by their names' UTF-16
 * code units, no whitespace, strings and numbers written as ECMAScript's JSON.stringify writes
 * them (RFC 8785 section 3.2.2 adopts exactly that serialisation). Signatures of receipts and
 * calls are made over these bytes, so any verifier with a JCS implementation rebuilds them.
 *
 * Values JSON cannot carry (undefined, bigint, functions, non-finite numbers) are refused rather
 * than guessed at: a signed form must mean one thing.
 */
export class NotCanonicalizable extends Error {
  readonly _tag = "NotCanonicalizable"
}

// Default sort compares UTF-16 code units, which is RFC 8785's order (section 3.2.3).
const byCodeUnits = (a: string, b: string) => (a < b ? -1 : a > b ? 1 : 0)

export const jcs = (value: unknown): string => {
  if (value === null) return "null"
  switch (typeof value) {
    case "boolean":
      return value ? "true" : "false"
    case "string":
      return JSON.stringify(value)
    case "number":
      if (!Number.isFinite(value)) throw new NotCanonicalizable(`${value} has no JSON form`)
      return JSON.stringify(value)
    case "object": {
      if (Array.isArray(value)) return `[${value.map(jcs).join(",")}]`
      // A Date or a class instance would silently become `{}`: only plain records are JSON objects.
      const prototype = Object.getPrototypeOf(value)
      if (prototype !== Object.prototype && prototype !== null) throw new NotCanonicalizable("not a plain JSON object")
      const record = value as Record<string, unknown>
      const members = Object.keys(record).sort(byCodeUnits).map((key) => `${JSON.stringify(key)}:${jcs(record[key])}`)
      return `{${members.join(",")}}`
    }
    default:
      throw new NotCanonicalizable(`a ${typeof value} has no JSON form`)
  }
}

/** SHA-256 hex of a value's canonical form: the input and result hashes of signed records. */
export const sha256OfJcs = (value: unknown): string => hash("sha256", jcs(value), "hex")
