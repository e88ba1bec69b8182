import { Webhook } from "standardwebhooks"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { verifyWebhook } from "../../clients/typescript/src/webhooks.js"
import { standardSignatureHeader } from "../../src/Services/Webhooks/Signature.js"
import { addMember, seedOrg, seedUser } from "../support/fixtures.js"
import { makeShiftableClock } from "../support/shiftableClock.js"
import { eventually, startWorld, type World } from "../support/world.js"
import { orgApi } from "./support.js"

/**
 * Deliveries verified by the Standard Webhooks library (`standardwebhooks`) beside the spec's
 * own Service-Signature, and a secret rotation: both secrets sign for 24 hours, then only the new.
 */
let world: World
const clock = makeShiftableClock()

beforeAll(async () => {
  world = await startWorld("standard_webhooks", { receiver: true, clock: clock.layer })
})
afterAll(() => world?.close())

const headersOf = (got: { readonly headers: Record<string, unknown> }) =>
  Object.fromEntries(Object.entries(got.headers).map(([name, value]) => [name, String(value)]))

/** Sends a test delivery to the endpoint and answers what the receiver got. */
const delivered = async (api: ReturnType<typeof orgApi>, webhookId: string, path: string) => {
  const before = world.receiver.received.filter((r) => r.path === path).length
  expect((await api.testWebhook(webhookId)).status).toBe(200)
  return eventually(() => world.receiver.received.filter((r) => r.path === path)[before])
}

/** Whether a Standard Webhooks receiver with `secret` accepts the delivery (its time checked against now). */
const standardAccepts = (secret: string, got: { readonly body: string; readonly headers: Record<string, unknown> }) => {
  try {
    new Webhook(secret).verify(got.body, headersOf(got))
    return true
  } catch {
    return false
  }
}

const specAccepts = (secret: string, got: { readonly body: string; readonly headers: Record<string, unknown> }) => {
  try {
    verifyWebhook({ rawBody: got.body, signature: String(got.headers["service-signature"]), secret, now: clock.now() })
    return true
  } catch {
    return false
  }
}

describe("Standard Webhooks", () => {
  it("signs as the Standard Webhooks specification's example", () => {
    expect(
      standardSignatureHeader(
        ["whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"],
        "msg_p5jXN8AQM9LWM0D4loKWxJek",
        1614265330,
        "{\"test\": 2432232314}"
      )
    ).toBe("v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE=")
  })

  it("a delivery verifies with the standardwebhooks library and with the spec's signature, under the same event id", async () => {
    const org = await seedOrg(world.db)
    const api = orgApi(world.server.url, org.orgId, org.owner.sessionToken)
    const path = `/std-${org.orgId}`
    const made = await api.createWebhook({ url: world.receiver.url.replace("/hook", path) })
    const secret: string = made.json.webhook.secret
    const got = await delivered(api, made.json.webhook.id, path)
    const event = new Webhook(secret).verify(got.body, headersOf(got)) as { id: string; type: string }
    expect(event.type).toBe("webhook.test")
    expect(got.headers["webhook-id"]).toBe(event.id)
    expect(got.headers["service-event-id"]).toBe(event.id)
    expect(got.headers["webhook-signature"]).toMatch(/^v1,[A-Za-z0-9+/]{43}=$/)
    expect(specAccepts(secret, got)).toBe(true)
    expect(standardAccepts(secret.slice(0, -1) + (secret.endsWith("A") ? "B" : "A"), got)).toBe(false)
    expect(standardAccepts(secret, { ...got, body: got.body.replace("webhook.test", "webhook.tesT") })).toBe(false)
  })

  it("a rotated secret signs beside the previous one for 24 hours, then alone", async () => {
    const org = await seedOrg(world.db)
    const api = orgApi(world.server.url, org.orgId, org.owner.sessionToken)
    const path = `/rotate-${org.orgId}`
    const made = await api.createWebhook({ url: world.receiver.url.replace("/hook", path) })
    const old: string = made.json.webhook.secret
    const id: string = made.json.webhook.id

    const rotated = await api.rotateSecret(id)
    expect(rotated.status).toBe(200)
    const fresh: string = rotated.json.webhook.secret
    expect(fresh).toMatch(/^whsec_[0-9A-Za-z]{44}$/)
    expect(fresh).not.toBe(old)
    const until = Date.parse(rotated.json.webhook.previous_secret_expires_at)
    expect(until - clock.now()).toBeGreaterThan(23.9 * 3600_000)
    expect(until - clock.now()).toBeLessThanOrEqual(24 * 3600_000)
    expect(rotated.json.webhook.secret_prefix).toBe(fresh.slice(0, 12))
    expect((await api.listWebhooks()).json.webhooks[0].previous_secret_expires_at).toBe(
      rotated.json.webhook.previous_secret_expires_at
    )

    const during = await delivered(api, id, path)
    expect(String(during.headers["webhook-signature"]).split(" ")).toHaveLength(2)
    expect(String(during.headers["service-signature"])).toMatch(/^t=\d+,v1=[0-9a-f]{64},v1=[0-9a-f]{64}$/)
    for (const secret of [fresh, old]) {
      expect(standardAccepts(secret, during)).toBe(true)
      expect(specAccepts(secret, during)).toBe(true)
    }

    // Past the overlap only the new secret signs. (The library checks the time against the
    // real clock, so the service's shifted time is carried back into the check.)
    clock.advance("24 hours")
    clock.advance("1 minute")
    const after = await delivered(api, id, path)
    expect(String(after.headers["webhook-signature"]).split(" ")).toHaveLength(1)
    const shiftedBack = {
      ...after,
      headers: { ...after.headers, "webhook-timestamp": String(Math.floor(Date.now() / 1000)) }
    }
    expect(specAccepts(fresh, after)).toBe(true)
    expect(specAccepts(old, after)).toBe(false)
    // The timestamp is signed: the library refuses a changed one even with the right secret...
    expect(standardAccepts(fresh, shiftedBack)).toBe(false)
    // ...so check the signature itself as the library computes it, at the delivery's own time.
    const signedAt = Number(after.headers["webhook-timestamp"])
    const { body } = after
    expect(new Webhook(fresh).sign(String(after.headers["webhook-id"]), new Date(signedAt * 1000), body))
      .toBe(after.headers["webhook-signature"])
    expect(new Webhook(old).sign(String(after.headers["webhook-id"]), new Date(signedAt * 1000), body))
      .not.toBe(after.headers["webhook-signature"])
  })

  it("only owners rotate; an unknown endpoint is not found", async () => {
    const org = await seedOrg(world.db)
    const api = orgApi(world.server.url, org.orgId, org.owner.sessionToken)
    expect((await api.rotateSecret("00000000-0000-4000-8000-000000000000")).status).toBe(404)
    expect((await api.rotateSecret("not-a-uuid")).status).toBe(404)
    const made = await api.createWebhook({ url: world.receiver.url })
    const member = await seedUser(world.db)
    await addMember(world.db, org.orgId, member.userId, "member")
    const refused = await orgApi(world.server.url, org.orgId, member.sessionToken).rotateSecret(made.json.webhook.id)
    expect(refused.status).toBe(403)
    expect(refused.json.error.code).toBe("forbidden")
  })
})
