import { createHmac, timingSafeEqual } from "node:crypto"

/**
 * An independent check of the delivery signature (Node's crypto only, written from the
 * specification, not the service's signer): hex HMAC-SHA256 of "<t>.<raw body>" keyed with
 * the endpoint secret, in `Service-Signature: t=<unix seconds>,v1=<hex>`.
 */
export const independentlyVerify = (secret: string, header: string, rawBody: string) => {
  const match = /^t=(\d+),v1=([0-9a-f]{64})$/.exec(header)
  if (match === null) return { valid: false, t: NaN }
  const expected = createHmac("sha256", secret).update(`${match[1]}.${rawBody}`).digest()
  const given = Buffer.from(match[2]!, "hex")
  return { valid: given.length === expected.length && timingSafeEqual(given, expected), t: Number(match[1]) }
}
