import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { adminCall, auditOf } from "../Operations/support.js"
import { emailFindInput } from "../Purchasing/support.js"
import type { SeenRequest } from "../support/fakeProvider.js"
import { startFakeToolProvider } from "../support/fakeToolProvider.js"
import { seedAdmin, seedAgent, seedOrg } from "../support/fixtures.js"
import { expectError } from "../support/people.js"
import { makeShiftableClock } from "../support/shiftableClock.js"
import { call, startWorld, topUp, type World } from "../support/world.js"
import { fetchDirectory, isSigned, verifyReceived } from "./support.js"

/**
 * Web Bot Auth: every request the service sends a provider is signed with its Ed25519 key,
 * and a provider checks it against the key directory the service publishes, as the
 * `web-bot-auth` library does. Signing can be switched off per provider, and a key rotation
 * publishes the new key ahead and keeps the old one until its last signature has expired.
 */
const ORIGIN = "https://gateway.example.test"
const DAY_MS = 24 * 60 * 60 * 1000
const clock = makeShiftableClock()
let world: World
let admin: { adminId: string; token: string }
let agentKey: string

beforeAll(async () => {
  world = await startWorld("bot_auth", { provider: true, clock: clock.layer, env: { BASE_URL: ORIGIN } })
  admin = await seedAdmin(world.db)
  const org = await seedOrg(world.db)
  await topUp(world, org.orgId, 1_000_000n)
  agentKey = (await seedAgent(world.db, org.orgId, { mode: "live", monthlyBudgetCredits: 100_000_000n })).key
}, 120_000)
afterAll(async () => {
  await world?.close()
})

const nowSeconds = () => Math.floor(clock.now() / 1000)

/** Calls a provider endpoint through the gateway and answers the request the provider received. */
const providerReceived = async (endpoint: string): Promise<SeenRequest> => {
  const before = world.fake.seen.length
  const answer = await call(world, "POST", "/v1/call", { token: agentKey, body: { endpoint } })
  expect(answer.status).toBe(200)
  const [provider, behaviour] = endpoint.split("/")
  const received = world.fake.seen.slice(before).filter((seen) => seen.url.startsWith(`/${provider}/v1/${behaviour}`))
  expect(received).toHaveLength(1)
  return received[0]!
}

describe("requests to providers", () => {
  it("carry the service's signature, which verifies against the directory it publishes", async () => {
    const seen = await providerReceived("fakeprov/ok")
    const { keys, cacheControl } = await fetchDirectory(world.server.url, nowSeconds())
    expect(keys).toHaveLength(1)
    expect(cacheControl).toBe("max-age=3600")
    const verified = await verifyReceived(seen, keys, nowSeconds())
    expect(verified).toEqual({ kid: keys[0]!.kid, agent: `sig1="${ORIGIN}"` })
    expect(seen.headers["signature-input"]).toMatch(
      /^sig1=\("@authority" "signature-agent";key="sig1"\);created=\d+;expires=\d+;keyid="[\w-]{43}";alg="ed25519";nonce="[A-Za-z0-9+/=]{88}";tag="web-bot-auth"$/
    )
    // Each request gets a signature of its own (a fresh nonce), never one reused for many.
    const again = await providerReceived("fakeprov/ok")
    expect(again.headers.signature).not.toBe(seen.headers.signature)
  })

  it("do not verify once moved to another authority, or past their expiry", async () => {
    const seen = await providerReceived("fakeprov/ok")
    const { keys } = await fetchDirectory(world.server.url, nowSeconds())
    await expect(
      verifyReceived({ ...seen, headers: { ...seen.headers, host: "provider.elsewhere.test" } }, keys, nowSeconds())
    )
      .rejects.toThrow(/verification failed/i)
    await expect(verifyReceived(seen, keys, nowSeconds() + 301)).rejects.toThrow(/expired/)
  })

  it("to a provider switched off go unsigned, the others still signed, until it is switched on", async () => {
    const signing = (provider: string, body: unknown) =>
      adminCall(world, admin, "PUT", `/admin/providers/${provider}/request-signing`, body)
    expectError(await signing("nobody", { signs_requests: false }), 404, "not_found")
    expect((await signing("capped", { signs_requests: false, reason: "Refuses unknown signatures" })).json).toEqual({
      provider_id: "capped",
      signs_requests: false
    })
    expect(isSigned(await providerReceived("capped/ok"))).toBe(false)
    const { keys } = await fetchDirectory(world.server.url, nowSeconds())
    await verifyReceived(await providerReceived("fakeprov/ok"), keys, nowSeconds())

    expect((await signing("capped", { signs_requests: true })).status).toBe(200)
    await verifyReceived(await providerReceived("capped/ok"), keys, nowSeconds())
    expect((await auditOf(world.db, "capped")).map((row: any) => [row.action, row.before, row.after])).toEqual([
      ["provider.signing_off", { signs_requests: true }, { signs_requests: false }],
      ["provider.signing_on", { signs_requests: false }, { signs_requests: true }]
    ])
  })
})

describe("a purchase's provider calls", () => {
  it("are signed too: the forwarder signs whoever calls it", async () => {
    const tools = await startFakeToolProvider()
    const buying = await startWorld("bot_auth_buy", {
      env: { BASE_URL: ORIGIN, LIVE_EXECUTE_ENABLED: "true", PROVIDERS_UPSTREAM: tools.url, GATEWAY_TIMEOUT_MS: "5000" }
    })
    try {
      const org = await seedOrg(buying.db)
      await topUp(buying, org.orgId, 10_000n)
      const buyer = await seedAgent(buying.db, org.orgId, {
        mode: "live",
        approvalThresholdCredits: null,
        monthlyBudgetCredits: 1_000_000n
      })
      const answer = await call(buying, "POST", "/v1/execute", {
        token: buyer.key,
        body: { tool: "hunter-email-finder", inputs: [emailFindInput(1), emailFindInput(2)] }
      })
      expect(answer.status).toBe(200)
      expect(tools.seen).toHaveLength(2)
      const now = Math.floor(Date.now() / 1000)
      const { keys } = await fetchDirectory(buying.server.url, now)
      for (const seen of tools.seen) {
        expect(await verifyReceived(seen, keys, now)).toEqual({ kid: keys[0]!.kid, agent: `sig1="${ORIGIN}"` })
      }
    } finally {
      await buying.close()
      await tools.close()
    }
  }, 120_000)
})

describe("key rotation", () => {
  it("publishes the next key a day ahead, signs with it from its start, and lists the old one until it expires", async () => {
    const first = (await fetchDirectory(world.server.url, nowSeconds())).keys
    expect(first).toHaveLength(1)
    const old = first[0]!
    const oldStops = old.exp - 300

    // Within the last day of the old key: the next one is published, the old one still signs.
    clock.advance(oldStops * 1000 - clock.now() - DAY_MS / 2)
    const ahead = (await fetchDirectory(world.server.url, nowSeconds())).keys
    expect(ahead.map((key) => key.kid)).toHaveLength(2)
    const next = ahead.find((key) => key.kid !== old.kid)!
    expect(next.nbf).toBe(oldStops)
    expect((await verifyReceived(await providerReceived("fakeprov/ok"), ahead, nowSeconds())).kid).toBe(old.kid)

    // Past the old key's end: the new key signs, and both are listed while old signatures live.
    clock.advance(DAY_MS / 2 + 1000)
    const both = (await fetchDirectory(world.server.url, nowSeconds())).keys
    expect(both.map((key) => key.kid).sort()).toEqual([old.kid, next.kid].sort())
    expect((await verifyReceived(await providerReceived("fakeprov/ok"), both, nowSeconds())).kid).toBe(next.kid)

    // Once the old key's last signature has expired, it leaves the directory.
    clock.advance(300 * 1000)
    const after = (await fetchDirectory(world.server.url, nowSeconds())).keys
    expect(after.map((key) => key.kid)).toEqual([next.kid])
  })
})
