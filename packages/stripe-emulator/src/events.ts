import { createHmac, randomBytes } from "node:crypto"

/**
 * The emulator's events: each change makes the event Stripe would, kept in order. With a
 * webhook endpoint configured they are also delivered there one after the other, signed as
 * Stripe signs them (the `Stripe-Signature` header: `t=<seconds>,v1=<HMAC-SHA256 of
 * "t.payload" with the endpoint's secret>`, which the official library verifies), and
 * retried with growing pauses while the endpoint does not answer 2xx, as Stripe retries.
 */
export interface StoredEvent {
  readonly id: string
  readonly type: string
  readonly payload: string
}

export interface WebhookEndpoint {
  /** Where to post; undefined while the receiver is not known yet (nothing is sent then). */
  readonly url: () => string | undefined
  readonly secret: string
}

export const newId = (prefix: string) => `${prefix}_${randomBytes(12).toString("hex")}`

/** The `Stripe-Signature` header of a payload, as Stripe makes it. */
export const signatureHeader = (payload: string, secret: string, timestamp = Math.floor(Date.now() / 1000)) =>
  `t=${timestamp},v1=${createHmac("sha256", secret).update(`${timestamp}.${payload}`).digest("hex")}`

/** Posts one signed event; answers the status and the body (parsed when it is JSON). */
export const deliverEvent = async (url: string, event: StoredEvent, secret: string) => {
  const response = await fetch(url, {
    method: "POST",
    headers: {
      "content-type": "application/json; charset=utf-8",
      "stripe-signature": signatureHeader(event.payload, secret),
      "user-agent": "Stripe/1.0 (+https://stripe.com/docs/webhooks)"
    },
    body: event.payload
  })
  const text = await response.text()
  let body: unknown = text
  try {
    body = JSON.parse(text)
  } catch {
    // not JSON
  }
  return { status: response.status, body }
}

/** Pauses between tries of one delivery, in milliseconds. */
const RETRY_PAUSES = [200, 1_000, 5_000, 15_000, 60_000]

export const eventLog = (options: {
  readonly apiVersion: string
  readonly clock: () => number
  readonly webhook: WebhookEndpoint | undefined
}) => {
  const events: Array<StoredEvent> = []
  const outbox: Array<StoredEvent> = []
  let sending = false
  let closed = false

  const pause = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms).unref())

  const send = async () => {
    const webhook = options.webhook
    if (sending || webhook === undefined) return
    sending = true
    while (outbox.length > 0 && !closed) {
      const event = outbox[0]!
      for (let attempt = 0; !closed; attempt++) {
        const url = webhook.url()
        const status = url === undefined
          ? 0
          : await deliverEvent(url, event, webhook.secret).then((answer) => answer.status, () => 0)
        if (status >= 200 && status < 300) break
        if (attempt >= RETRY_PAUSES.length) break
        await pause(RETRY_PAUSES[attempt]!)
      }
      outbox.shift()
    }
    sending = false
  }

  const emit = (type: string, object: unknown): StoredEvent => {
    const event = {
      id: newId("evt"),
      object: "event",
      api_version: options.apiVersion,
      created: options.clock(),
      data: { object: JSON.parse(JSON.stringify(object)) },
      livemode: false,
      pending_webhooks: options.webhook === undefined ? 0 : 1,
      request: { id: null, idempotency_key: null },
      type
    }
    const stored = { id: event.id, type, payload: JSON.stringify(event) }
    events.push(stored)
    if (options.webhook !== undefined) {
      outbox.push(stored)
      void send()
    }
    return stored
  }

  return {
    events,
    emit,
    /** Whether every event made so far was delivered (or given up on). */
    delivered: () => outbox.length === 0,
    close: () => void (closed = true)
  }
}
