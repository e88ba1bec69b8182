import { createLocalJWKSet, createRemoteJWKSet, errors, flattenedVerify, type JSONWebKeySet } from "jose"

/**
 * Proving what an agent bought: receipts, gateway call records and disputes carry `signature`
 * `{alg: "EdDSA", kid, jws}`, a detached JWS over the RFC 8785 canonical JSON of the record
 * without `signature`. Anyone can check one with the service's published keys alone:
 *
 *   const { kid } = await verifyReceipt(receipt, { baseUrl: "https://api.example.com" })
 *
 * Throws ReceiptVerificationError with a `reason` when the record was changed, names a key
 * that did not sign it, or names a key the service never published.
 */
export class ReceiptVerificationError extends Error {
  readonly reason:
    | "unsigned"
    | "malformed_signature"
    | "kid_mismatch"
    | "unknown_key"
    | "signature_mismatch"
    | "not_json"
  constructor(reason: ReceiptVerificationError["reason"], message: string) {
    super(message)
    this.name = "ReceiptVerificationError"
    this.reason = reason
  }
}

export interface VerifyReceiptOptions {
  /** The service's keys (`GET /.well-known/jwks.json`), when already at hand. */
  readonly jwks?: JSONWebKeySet
  /** Where to fetch them (default `<baseUrl>/.well-known/jwks.json`). */
  readonly jwksUrl?: string | URL
  /** The service's address (default SERVICE_API_URL, then http://localhost:8080). */
  readonly baseUrl?: string
}

export interface VerifiedReceipt<A> {
  /** The key that signed it. */
  readonly kid: string
  readonly record: A
}

const byCodeUnits = (a: string, b: string) => (a < b ? -1 : a > b ? 1 : 0)

/** RFC 8785 canonical JSON: members sorted by UTF-16 code units, ECMAScript number and string forms. */
export const canonicalJson = (value: unknown): string => {
  if (value === null) return "null"
  if (typeof value === "boolean") return value ? "true" : "false"
  if (typeof value === "string") return JSON.stringify(value)
  if (typeof value === "number" && Number.isFinite(value)) return JSON.stringify(value)
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(",")}]`
  if (typeof value === "object" && [Object.prototype, null].includes(Object.getPrototypeOf(value))) {
    const record = value as Record<string, unknown>
    return `{${
      Object.keys(record).sort(byCodeUnits).map((key) => `${JSON.stringify(key)}:${canonicalJson(record[key])}`).join(
        ","
      )
    }}`
  }
  throw new ReceiptVerificationError(
    "not_json",
    `A ${typeof value} is not JSON: the record was not read from the service`
  )
}

// Remote key sets are kept per address, so their keys are fetched once (and again for a new kid).
const remoteSets = new Map<string, ReturnType<typeof createRemoteJWKSet>>()
const keySetFor = (options: VerifyReceiptOptions) => {
  if (options.jwks !== undefined) return createLocalJWKSet(options.jwks)
  const baseUrl = (options.baseUrl ?? process.env["SERVICE_API_URL"] ?? "http://localhost:8080").replace(/\/+$/, "")
  const url = String(options.jwksUrl ?? `${baseUrl}/.well-known/jwks.json`)
  let set = remoteSets.get(url)
  if (set === undefined) {
    set = createRemoteJWKSet(new URL(url))
    remoteSets.set(url, set)
  }
  return set
}

const headerOf = (encoded: string) => {
  try {
    return JSON.parse(Buffer.from(encoded, "base64url").toString("utf8")) as { alg?: unknown; kid?: unknown }
  } catch {
    throw new ReceiptVerificationError("malformed_signature", "The JWS header is not base64url JSON")
  }
}

/** Checks a signed receipt, call record or dispute; answers the key that signed it. */
export const verifyReceipt = async <A extends { readonly signature?: unknown }>(
  record: A,
  options: VerifyReceiptOptions = {}
): Promise<VerifiedReceipt<A>> => {
  const { signature, ...signed } = record
  if (signature === undefined || signature === null) {
    throw new ReceiptVerificationError("unsigned", "The record has no `signature`")
  }
  const { jws, kid } = signature as { jws?: unknown; kid?: unknown }
  const parts = typeof jws === "string" ? jws.split(".") : []
  if (parts.length !== 3 || parts[1] !== "" || typeof kid !== "string") {
    throw new ReceiptVerificationError(
      "malformed_signature",
      "`signature.jws` must be a detached JWS: <header>..<signature>"
    )
  }
  const header = headerOf(parts[0]!)
  if (header.alg !== "EdDSA") {
    throw new ReceiptVerificationError("malformed_signature", `Unexpected algorithm ${String(header.alg)}`)
  }
  if (header.kid !== kid) {
    throw new ReceiptVerificationError(
      "kid_mismatch",
      `\`signature.kid\` ${kid} is not the key id the JWS names (${String(header.kid)})`
    )
  }
  const payload = Buffer.from(canonicalJson(signed), "utf8").toString("base64url")
  try {
    await flattenedVerify({ protected: parts[0]!, payload, signature: parts[2]! }, keySetFor(options), {
      algorithms: ["EdDSA"]
    })
  } catch (error) {
    if (error instanceof errors.JWKSNoMatchingKey) {
      throw new ReceiptVerificationError("unknown_key", `The service publishes no key ${kid}`)
    }
    if (error instanceof errors.JWSSignatureVerificationFailed) {
      throw new ReceiptVerificationError(
        "signature_mismatch",
        "The signature does not match the record: it was changed"
      )
    }
    throw error
  }
  return { kid, record }
}
