import { createHmac, timingSafeEqual } from "node:crypto"

/**
 * Verifying a webhook delivery on the receiving side. Self-contained (Node's `crypto`
 * only), so a receiver can import it from this package or copy it.
 *
 *   const event = verifyWebhook({ rawBody, signature: req.headers["service-signature"], secret })
 *
 * It checks the `Service-Signature` header (`t=<unix seconds>,v1=<hex HMAC-SHA256>`)
 * against the raw body exactly as received (verify before parsing: re-serialised JSON
 * would not match), compares in constant time, refuses a `t` more than five minutes from
 * the receiver's clock, and only then parses the envelope. Every `v1=` entry is tried (any
 * may match): for 24 hours after a secret rotation the header carries two, one signed with
 * the previous secret and one with the new.
 */
export const DEFAULT_TOLERANCE_SECONDS = 300

export interface WebhookEvent {
  readonly id: string
  readonly type: string
  readonly created_at: string
  readonly data: Record<string, unknown>
}

export class WebhookVerificationError extends Error {
  readonly reason:
    | "missing_signature"
    | "malformed_signature"
    | "timestamp_out_of_tolerance"
    | "signature_mismatch"
    | "malformed_body"
  constructor(reason: WebhookVerificationError["reason"], message: string) {
    super(message)
    this.name = "WebhookVerificationError"
    this.reason = reason
  }
}

export interface VerifyOptions {
  /** The request body exactly as received (a Buffer or the undecoded string). */
  readonly rawBody: string | Uint8Array
  /** The `Service-Signature` header. */
  readonly signature: string | ReadonlyArray<string> | undefined | null
  /** The endpoint's `whsec_...` secret. */
  readonly secret: string
  /** Allowed distance between `t` and now, in seconds (default 300). */
  readonly toleranceSeconds?: number
  /** The receiver's clock in milliseconds (default Date.now()). */
  readonly now?: number
}

const parseHeader = (header: string) => {
  let timestamp: number | undefined
  const signatures: Array<string> = []
  for (const part of header.split(",")) {
    const index = part.indexOf("=")
    if (index <= 0) continue
    const key = part.slice(0, index).trim()
    const value = part.slice(index + 1).trim()
    if (key === "t" && /^\d+$/.test(value)) timestamp = Number(value)
    else if (key === "v1" && /^[0-9a-f]{64}$/i.test(value)) signatures.push(value.toLowerCase())
  }
  return { timestamp, signatures }
}

/** Answers the parsed event when the delivery is authentic; throws WebhookVerificationError otherwise. */
export const verifyWebhook = (options: VerifyOptions): WebhookEvent => {
  const header = Array.isArray(options.signature) ? options.signature[0] : options.signature
  if (typeof header !== "string" || header.length === 0) {
    throw new WebhookVerificationError("missing_signature", "No Service-Signature header")
  }
  const { signatures, timestamp } = parseHeader(header)
  if (timestamp === undefined || signatures.length === 0) {
    throw new WebhookVerificationError("malformed_signature", "Service-Signature must be t=<seconds>,v1=<hex>")
  }
  const now = options.now ?? Date.now()
  const tolerance = options.toleranceSeconds ?? DEFAULT_TOLERANCE_SECONDS
  if (Math.abs(Math.floor(now / 1000) - timestamp) > tolerance) {
    throw new WebhookVerificationError("timestamp_out_of_tolerance", "Signature timestamp is outside the tolerance")
  }
  const body = typeof options.rawBody === "string" ? Buffer.from(options.rawBody, "utf8") : Buffer.from(options.rawBody)
  const expected = createHmac("sha256", options.secret)
    .update(Buffer.concat([Buffer.from(`${timestamp}.`, "utf8"), body]))
    .digest()
  const matches = signatures.some((hex) => {
    const given = Buffer.from(hex, "hex")
    return given.length === expected.length && timingSafeEqual(given, expected)
  })
  if (!matches) throw new WebhookVerificationError("signature_mismatch", "Signature does not match")
  try {
    return JSON.parse(body.toString("utf8")) as WebhookEvent
  } catch {
    throw new WebhookVerificationError("malformed_body", "Body is not JSON")
  }
}

/**
 * Drops repeats: deliveries can arrive more than once, always with the same event id.
 * Keeps ids for `ttlMs` (default 48 hours, past the 24-hour retry window). In-memory; a
 * receiver with several processes should keep the ids in its database instead.
 */
export const createEventDeduper = (ttlMs = 48 * 60 * 60 * 1000) => {
  const seen = new Map<string, number>()
  return {
    /** True the first time an event id is seen, false for a repeat. */
    firstTime: (eventId: string, now = Date.now()): boolean => {
      for (const [id, at] of seen) {
        if (now - at <= ttlMs) break
        seen.delete(id)
      }
      if (seen.has(eventId)) return false
      seen.set(eventId, now)
      return true
    }
  }
}
