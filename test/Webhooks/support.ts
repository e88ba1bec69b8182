import { createHmac, timingSafeEqual } from "node:crypto"
import { call } from "../support/world.js"

/** The webhook endpoints of one org on the server at `serverUrl`, called with one credential. */
export const orgApi = (serverUrl: string, orgId: string, token: string) => {
  const send = (method: string, path: string, body?: unknown) =>
    call({ server: { url: serverUrl } }, method, `/v1/orgs/${orgId}${path}`, { token, body })
  return {
    send,
    createWebhook: (body: unknown) => send("POST", "/webhooks", body),
    listWebhooks: () => send("GET", "/webhooks"),
    deleteWebhook: (id: string) => send("DELETE", `/webhooks/${id}`),
    testWebhook: (id: string) => send("POST", `/webhooks/${id}/test`),
    rotateSecret: (id: string) => send("POST", `/webhooks/${id}/rotate-secret`),
    deliveries: (query = "") => send("GET", `/webhook-deliveries${query}`),
    events: (query = "") => send("GET", `/events${query}`),
    notifications: () => send("GET", "/notifications"),
    setNotifications: (body: unknown) => send("PUT", "/notifications", body)
  }
}

export type OrgApi = ReturnType<typeof orgApi>

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
