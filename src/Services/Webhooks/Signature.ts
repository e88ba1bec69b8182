import { createHmac } from "node:crypto"

/**
 * The delivery signature: `Service-Signature: t=<unix seconds>,v1=<hex HMAC-SHA256 of
 * "<t>.<raw body>" keyed with the endpoint's whsec_ secret>`.
 */
export const USER_AGENT = "Service-Webhooks/1.0"

export const signatureHeader = (secret: string, unixSeconds: number, rawBody: string): string =>
  `t=${unixSeconds},v1=${createHmac("sha256", secret).update(`${unixSeconds}.${rawBody}`, "utf8").digest("hex")}`

export const deliveryHeaders = (input: {
  readonly secret: string
  readonly eventId: string
  readonly eventType: string
  readonly unixSeconds: number
  readonly body: string
}): Record<string, string> => ({
  "Content-Type": "application/json",
  "User-Agent": USER_AGENT,
  "Service-Event-Id": input.eventId,
  "Service-Event-Type": input.eventType,
  "Service-Signature": signatureHeader(input.secret, input.unixSeconds, input.body)
})
