import { SignedDispute } from "@agent-gateway/contract/Domain/Dispute.js"
import { Receipt } from "@agent-gateway/contract/Domain/Purchasing.js"
import { CallRecord } from "@agent-gateway/contract/Http/Groups/GatewayGroup.js"
import { Either, Schema } from "effect"
import { createLocalJWKSet, createRemoteJWKSet, errors, flattenedVerify, type JSONWebKeySet } from "jose"
import { DEFAULT_BASE_URL } from "./client.js"

/**
 * Proving what an agent bought: receipts, gateway call records and disputes carry `signature`
 * `{alg: "EdDSA", kid, jws}`, a detached JWS over the RFC 8785 canonical JSON of the record
 * without `signature`. Anyone can check one with the service's published keys alone:
 *
 *   const { kid } = await verifyReceipt(await gateway.receipt(id), { baseUrl: "https://api.example.com" })
 *
 * It takes a record as this client answers it (decoded: credits as bigint, timestamps as
 * Dates), as the service's JSON, or the JSON answer of `GET /v1/receipts/{id}` or
 * `GET /v1/disputes/{id}` (`{receipt}`, `{dispute}`).
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
  /** The service's address (default SERVICE_API_URL, then DEFAULT_BASE_URL). */
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
  const baseUrl = (options.baseUrl ?? process.env["SERVICE_API_URL"] ?? DEFAULT_BASE_URL).replace(/\/+$/, "")
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

/** The records the service signs, as the contract declares their wire form. */
const signedRecords = [Receipt, SignedDispute, CallRecord] as const

/** The single-record answers that wrap a signed record (`GET /v1/receipts/{id}`, `GET /v1/disputes/{id}`). */
const wrappers = ["receipt", "dispute"] as const

const isJson = (value: unknown): boolean => {
  if (value === null || typeof value === "string" || typeof value === "boolean") return true
  if (typeof value === "number") return Number.isFinite(value)
  if (Array.isArray(value)) return value.every(isJson)
  return typeof value === "object" && [Object.prototype, null].includes(Object.getPrototypeOf(value)) &&
    Object.values(value).every(isJson)
}

/** The record itself: an answer that wraps one (`{receipt}`, `{dispute}`) unwrapped. */
const unwrapped = (answer: object): Record<string, unknown> => {
  const members = Object.keys(answer)
  const name = wrappers.find((wrapper) => members.length === 1 && members[0] === wrapper)
  const inner = name === undefined ? undefined : (answer as Record<string, unknown>)[name]
  return typeof inner === "object" && inner !== null
    ? inner as Record<string, unknown>
    : answer as Record<string, unknown>
}

/**
 * The record as the service answered it: JSON as it is, or a record this client decoded
 * encoded back by the contract's own schema of it (members it does not declare kept, so an
 * added member still fails the signature).
 */
const wireFormOf = (record: Record<string, unknown>): unknown => {
  if (isJson(record)) return record
  for (const schema of signedRecords) {
    const encoded = Schema.encodeUnknownEither(schema as Schema.Schema<unknown, unknown>)(record, {
      onExcessProperty: "preserve"
    })
    if (Either.isRight(encoded)) return encoded.right
  }
  throw new ReceiptVerificationError(
    "not_json",
    "The record is neither the service's JSON nor a receipt, call record or dispute as this client decodes it"
  )
}

/**
 * Checks a signed receipt, call record or dispute (decoded by this client, or the service's
 * JSON, or an answer wrapping one); answers the key that signed it.
 */
export const verifyReceipt = async <A extends object>(
  answer: A,
  options: VerifyReceiptOptions = {}
): Promise<VerifiedReceipt<A>> => {
  const record = unwrapped(answer)
  const signature = record["signature"]
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
  const { signature: _signature, ...signed } = wireFormOf(record) as Record<string, unknown>
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
  return { kid, record: answer }
}
