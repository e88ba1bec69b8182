import { hash } from "node:crypto"

/**
 * Canonical JSON: object keys sorted (by UTF-16 code unit, recursively), arrays kept in
 * order, no whitespace, `undefined` members dropped. Two values that mean the same JSON
 * give the same text, so their SHA-256 is a stable fingerprint (result hashes on receipts,
 * idempotency fingerprints, the inputs an approval is locked to).
 */
export const canonicalJson = (value: unknown): string => {
  if (value === null || typeof value !== "object") {
    if (typeof value === "bigint") return JSON.stringify(value.toString())
    return JSON.stringify(value) ?? "null"
  }
  if (Array.isArray(value)) return `[${value.map((item) => canonicalJson(item === undefined ? null : item)).join(",")}]`
  const entries = Object.keys(value as Record<string, unknown>)
    .filter((key) => (value as Record<string, unknown>)[key] !== undefined)
    .sort()
    .map((key) => `${JSON.stringify(key)}:${canonicalJson((value as Record<string, unknown>)[key])}`)
  return `{${entries.join(",")}}`
}

export const sha256OfCanonical = (value: unknown): string => hash("sha256", canonicalJson(value), "hex")
