import { createEventDeduper, verifyWebhook, WebhookVerificationError } from "agent-purchasing-gateway/webhooks"
import { createHmac } from "node:crypto"
import { describe, expect, it } from "vitest"

/** The exported receiver verifier, checked against signatures made here with Node's crypto. */
const secret = "whsec_0123456789abcdefghijklmnopqrstuvwxyzABCDEFG"
const body = JSON.stringify({
  id: "5b0c9f3e-7f7a-4a53-9a55-1a0b2c3d4e5f",
  type: "balance.low",
  created_at: "2026-11-22T00:00:00.000Z",
  data: { balance_credits: "4200", balance_usd: "4.200" }
})
const now = Date.parse("2026-11-22T00:00:30.000Z")
const t = Math.floor(now / 1000)
const sign = (timestamp: number, payload: string, key = secret) =>
  `t=${timestamp},v1=${createHmac("sha256", key).update(`${timestamp}.${payload}`).digest("hex")}`

const reason = (run: () => unknown) => {
  try {
    run()
  } catch (error) {
    expect(error).toBeInstanceOf(WebhookVerificationError)
    return (error as WebhookVerificationError).reason
  }
  return "accepted"
}

describe("verifyWebhook", () => {
  it("accepts an authentic delivery given as a string or as raw bytes, and answers the parsed event", () => {
    expect(verifyWebhook({ rawBody: body, signature: sign(t, body), secret, now })).toEqual(JSON.parse(body))
    expect(verifyWebhook({ rawBody: Buffer.from(body), signature: sign(t, body), secret, now }).id).toBe(
      "5b0c9f3e-7f7a-4a53-9a55-1a0b2c3d4e5f"
    )
  })

  it("checks the raw body: the same JSON re-serialised differently does not verify", () => {
    const pretty = JSON.stringify(JSON.parse(body), null, 2)
    expect(reason(() => verifyWebhook({ rawBody: pretty, signature: sign(t, body), secret, now }))).toBe(
      "signature_mismatch"
    )
  })

  it("refuses a wrong secret, a changed body, a missing or malformed header", () => {
    expect(reason(() => verifyWebhook({ rawBody: body, signature: sign(t, body, `${secret}x`), secret, now }))).toBe(
      "signature_mismatch"
    )
    expect(
      reason(() => verifyWebhook({ rawBody: body.replace("4200", "9999"), signature: sign(t, body), secret, now }))
    ).toBe("signature_mismatch")
    expect(reason(() => verifyWebhook({ rawBody: body, signature: undefined, secret, now }))).toBe("missing_signature")
    expect(reason(() => verifyWebhook({ rawBody: body, signature: "v1=abc", secret, now }))).toBe("malformed_signature")
    expect(reason(() => verifyWebhook({ rawBody: body, signature: `t=${t}`, secret, now }))).toBe("malformed_signature")
    // A signature over another timestamp does not verify with this one.
    const forged = sign(t - 10, body).replace(`t=${t - 10}`, `t=${t}`)
    expect(reason(() => verifyWebhook({ rawBody: body, signature: forged, secret, now }))).toBe("signature_mismatch")
  })

  it("allows 5 minutes of clock difference either way, and no more", () => {
    expect(reason(() => verifyWebhook({ rawBody: body, signature: sign(t - 300, body), secret, now }))).toBe("accepted")
    expect(reason(() => verifyWebhook({ rawBody: body, signature: sign(t + 300, body), secret, now }))).toBe("accepted")
    expect(reason(() => verifyWebhook({ rawBody: body, signature: sign(t - 301, body), secret, now }))).toBe(
      "timestamp_out_of_tolerance"
    )
    expect(reason(() => verifyWebhook({ rawBody: body, signature: sign(t + 301, body), secret, now }))).toBe(
      "timestamp_out_of_tolerance"
    )
  })

  it("tries every v1 value of a rotation's header, whichever secret the receiver holds and in either order", () => {
    const previous = "whsec_previous0123456789abcdefghijklmnopqrstuvw"
    const withSecret = (key: string) => sign(t, body, key).split(",")[1]!
    // As the service sends it during a rotation: t, then the previous secret's v1, then the new one's.
    const rotation = `t=${t},${withSecret(previous)},${withSecret(secret)}`
    for (const held of [previous, secret]) {
      expect(reason(() => verifyWebhook({ rawBody: body, signature: rotation, secret: held, now })), held).toBe(
        "accepted"
      )
    }
    // A receiver that kept only the first (or the last) v1, as a map of the pairs does, would refuse one of them.
    const reversed = `t=${t},${withSecret(secret)},${withSecret(previous)}`
    expect(reason(() => verifyWebhook({ rawBody: body, signature: reversed, secret: previous, now }))).toBe("accepted")
    expect(reason(() => verifyWebhook({ rawBody: body, signature: rotation, secret: "whsec_neither", now }))).toBe(
      "signature_mismatch"
    )
  })

  it("accepts any of several v1 signatures (for a secret rotation)", () => {
    const other = sign(t, body, "whsec_other").split(",")[1]
    expect(reason(() => verifyWebhook({ rawBody: body, signature: `${sign(t, body)},${other}`, secret, now }))).toBe(
      "accepted"
    )
    expect(reason(() => verifyWebhook({ rawBody: body, signature: `t=${t},${other}`, secret, now }))).toBe(
      "signature_mismatch"
    )
  })

  it("drops a repeated event id", () => {
    const deduper = createEventDeduper(1_000)
    expect(deduper.firstTime("e1", 0)).toBe(true)
    expect(deduper.firstTime("e1", 10)).toBe(false)
    expect(deduper.firstTime("e2", 20)).toBe(true)
    expect(deduper.firstTime("e1", 2_000)).toBe(true)
  })
})
