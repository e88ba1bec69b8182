import { createHmac, randomBytes } from "node:crypto"
import { base62, secretPrefixes } from "../../Domain/Secrets.js"

/**
 * The delivery signatures, two schemes over the same body:
 * - the specification's `Service-Signature: t=<unix seconds>,v1=<hex HMAC-SHA256 of
 *   "<t>.<raw body>" keyed with the endpoint's whsec_ secret as text>`;
 * - Standard Webhooks (standardwebhooks.com): `webhook-id` (the event id), `webhook-timestamp`
 *   and `webhook-signature: v1,<base64 HMAC-SHA256 of "<id>.<timestamp>.<raw body>">`, keyed
 *   with the bytes the secret's text after `whsec_` decodes to as base64, so a receiver can
 *   verify with any Standard Webhooks library.
 * While a rotated secret's overlap lasts, each header carries one signature per secret
 * (newest first): `v1=` entries in the first, space-separated `v1,` entries in the second.
 */
export const USER_AGENT = "Service-Webhooks/1.0"

/**
 * A new endpoint secret: 32 random bytes in base62, written as 44 digits so the text is also
 * valid base64 (a length of a multiple of 4, from an alphabet base64 shares) for every
 * Standard Webhooks library. Secrets made before were 43 digits: only lenient base64 decoders
 * read those, so their owners are told to rotate once.
 */
export const newWebhookSecret = (): string => `${secretPrefixes.webhook}${base62(randomBytes(32)).padStart(44, "0")}`

const standardKey = (secret: string) =>
  Buffer.from(
    secret.startsWith(secretPrefixes.webhook) ? secret.slice(secretPrefixes.webhook.length) : secret,
    "base64"
  )

export const signatureHeader = (secrets: ReadonlyArray<string>, unixSeconds: number, rawBody: string): string =>
  [
    `t=${unixSeconds}`,
    ...secrets.map((secret) =>
      `v1=${createHmac("sha256", secret).update(`${unixSeconds}.${rawBody}`, "utf8").digest("hex")}`
    )
  ].join(",")

export const standardSignatureHeader = (
  secrets: ReadonlyArray<string>,
  id: string,
  unixSeconds: number,
  rawBody: string
): string =>
  secrets.map((secret) =>
    `v1,${createHmac("sha256", standardKey(secret)).update(`${id}.${unixSeconds}.${rawBody}`, "utf8").digest("base64")}`
  ).join(" ")

export const deliveryHeaders = (input: {
  /** The endpoint's secrets, newest first: the current one, and the previous one during its overlap. */
  readonly secrets: ReadonlyArray<string>
  readonly eventId: string
  readonly eventType: string
  readonly unixSeconds: number
  readonly body: string
}): Record<string, string> => ({
  "Content-Type": "application/json",
  "User-Agent": USER_AGENT,
  "Service-Event-Id": input.eventId,
  "Service-Event-Type": input.eventType,
  "Service-Signature": signatureHeader(input.secrets, input.unixSeconds, input.body),
  "webhook-id": input.eventId,
  "webhook-timestamp": String(input.unixSeconds),
  "webhook-signature": standardSignatureHeader(input.secrets, input.eventId, input.unixSeconds, input.body)
})
