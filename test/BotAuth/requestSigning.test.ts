import { expect, layer } from "@effect/vitest"
import { Clock, Effect, Layer, Schema } from "effect"
import type { AuthenticatedAgent } from "../../src/Domain/Current.js"
import type { CallRequest } from "../../src/Domain/GatewayCall.js"
import { OrgId } from "../../src/Domain/Ids.js"
import { ExecuteRequest } from "../../src/Domain/Purchasing.js"
import { errorCatalogue } from "../../src/Errors/ErrorCatalogue.js"
import { KEY_DIRECTORY_PATH, KeyDirectory } from "../../src/Services/BotAuth/KeyDirectory.js"
import { ProviderSigning } from "../../src/Services/BotAuth/ProviderSigning.js"
import { Gateway } from "../../src/Services/Gateway/Gateway.js"
import { Ledger } from "../../src/Services/Ledger/Ledger.js"
import { Execute } from "../../src/Services/Purchasing/Execute.js"
import { auditOf } from "../Operations/support.js"
import { emailFindInput } from "../Purchasing/support.js"
import type { SeenRequest } from "../support/fakeProvider.js"
import { agentOf, seedAdmin, seedAgent, seedOrg } from "../support/fixtures.js"
import { makeShiftableClock } from "../support/shiftableClock.js"
import {
  FakeProviderServer,
  FakeToolProviderServer,
  gatewayTier,
  inRealTime,
  inShiftedTime,
  livePurchasingTier,
  SuiteDatabase
} from "../support/testLayers.js"
import { checkDirectory, isSigned, verifyReceived } from "./support.js"

/**
 * Web Bot Auth: every request the service sends a provider is signed with its Ed25519 key,
 * and a provider checks it against the key directory the service publishes, as the
 * `web-bot-auth` library does. Signing can be switched off per provider, and a key rotation
 * publishes the new key ahead and keeps the old one until its last signature has expired.
 * On the gateway's (and a purchase's) services, without HTTP: the fake provider sees the
 * requests the gateway makes, and the directory is the one the route answers
 * (`KeyDirectory`), checked as a provider checks it; the route itself is the Http family's
 * wire suite's (`test/Http/wire/keyDirectory.ts`).
 */
const ORIGIN = "https://gateway.example.test"
const DAY_MS = 24 * 60 * 60 * 1000
const clock = makeShiftableClock()
const shifted = inShiftedTime(clock)

const nowSeconds = Effect.map(Clock.currentTimeMillis, (ms) => Math.floor(ms / 1000))

/** The directory the service publishes now, as answered for its public address, checked. */
const directory = Effect.gen(function*() {
  const url = `${ORIGIN}${KEY_DIRECTORY_PATH}`
  const signed = yield* (yield* KeyDirectory).signedFor(url)
  const now = yield* nowSeconds
  return yield* Effect.promise(() =>
    checkDirectory(url, { header: (name) => signed.headers[name], body: signed.body }, now)
  )
})

const verify = (seen: SeenRequest, keys: Parameters<typeof verifyReceived>[1], at?: number) =>
  Effect.flatMap(nowSeconds, (now) => Effect.promise(() => verifyReceived(seen, keys, at ?? now)))

/** A live agent of a funded org. */
const fundedAgent = (credits: bigint) =>
  Effect.gen(function*() {
    const db = yield* SuiteDatabase
    const org = yield* Effect.promise(() => seedOrg(db))
    yield* (yield* Ledger).credit(OrgId.make(org.orgId), credits, "top_up", "test top-up")
    const seeded = yield* Effect.promise(() =>
      seedAgent(db, org.orgId, { mode: "live", approvalThresholdCredits: null, monthlyBudgetCredits: 100_000_000n })
    )
    return yield* Effect.promise(() => agentOf(db, seeded.agentId))
  })

layer(
  Layer.merge(KeyDirectory.Default, ProviderSigning.Default).pipe(
    Layer.provideMerge(gatewayTier("bot_auth", { BASE_URL: ORIGIN }))
  )
)((it) => {
  /** Calls a provider endpoint through the gateway and answers the request the provider received. */
  const providerReceived = (endpoint: CallRequest["endpoint"]) =>
    Effect.gen(function*() {
      const fake = yield* FakeProviderServer
      const before = fake.seen.length
      const answer = yield* (yield* Gateway).call(yield* fundedAgent(1_000_000n), { endpoint })
      expect(answer.status).toBe("succeeded")
      const [provider, behaviour] = endpoint.split("/")
      const received = fake.seen.slice(before).filter((seen) => seen.url.startsWith(`/${provider}/v1/${behaviour}`))
      expect(received).toHaveLength(1)
      return received[0]!
    })

  it.effect("requests to providers carry the service's signature, which verifies against the directory it publishes", () =>
    shifted(Effect.gen(function*() {
      const seen = yield* providerReceived("fakeprov/ok")
      const { cacheControl, keys } = yield* directory
      expect(keys).toHaveLength(1)
      expect(cacheControl).toBe("max-age=3600")
      expect(yield* verify(seen, keys)).toEqual({ kid: keys[0]!.kid, agent: `sig1="${ORIGIN}"` })
      expect(seen.headers["signature-input"]).toMatch(
        /^sig1=\("@authority" "signature-agent";key="sig1"\);created=\d+;expires=\d+;keyid="[\w-]{43}";alg="ed25519";nonce="[A-Za-z0-9+/=]{88}";tag="web-bot-auth"$/
      )
      // Each request gets a signature of its own (a fresh nonce), never one reused for many.
      const again = yield* providerReceived("fakeprov/ok")
      expect(again.headers.signature).not.toBe(seen.headers.signature)
    })))

  it.effect("requests to providers do not verify once moved to another authority, or past their expiry", () =>
    shifted(Effect.gen(function*() {
      const seen = yield* providerReceived("fakeprov/ok")
      const { keys } = yield* directory
      const now = yield* nowSeconds
      yield* Effect.promise(() =>
        expect(
          verifyReceived({ ...seen, headers: { ...seen.headers, host: "provider.elsewhere.test" } }, keys, now)
        ).rejects.toThrow(/verification failed/i)
      )
      yield* Effect.promise(() => expect(verifyReceived(seen, keys, now + 301)).rejects.toThrow(/expired/))
    })))

  it.effect("requests to a provider switched off go unsigned, the others still signed, until it is switched on", () =>
    shifted(Effect.gen(function*() {
      const db = yield* SuiteDatabase
      const seeded = yield* Effect.promise(() => seedAdmin(db))
      const admin = { admin_id: seeded.adminId, email: "admin@example.com" }
      const signing = yield* ProviderSigning
      // No such provider: the refusal that goes out as 404 not_found.
      const nobody = yield* Effect.flip(signing.setSigning(admin, "nobody", false, undefined))
      expect({ code: nobody._tag, retryable: errorCatalogue[nobody._tag].retryable }).toEqual({
        code: "not_found",
        retryable: false
      })
      expect(yield* signing.setSigning(admin, "capped", false, "Refuses unknown signatures")).toEqual({
        provider_id: "capped",
        signs_requests: false
      })
      expect(isSigned(yield* providerReceived("capped/ok"))).toBe(false)
      const { keys } = yield* directory
      yield* verify(yield* providerReceived("fakeprov/ok"), keys)

      expect((yield* signing.setSigning(admin, "capped", true, undefined)).signs_requests).toBe(true)
      yield* verify(yield* providerReceived("capped/ok"), keys)
      const audit = yield* Effect.promise(() => auditOf(db, "capped"))
      expect(audit.map((row: any) => [row.action, row.before, row.after])).toEqual([
        ["provider.signing_off", { signs_requests: true }, { signs_requests: false }],
        ["provider.signing_on", { signs_requests: false }, { signs_requests: true }]
      ])
    })))

  // Last: it moves the clock by a month.
  it.effect(
    "key rotation publishes the next key a day ahead, signs with it from its start, and lists the old one until it expires",
    () =>
      shifted(Effect.gen(function*() {
        const first = (yield* directory).keys
        expect(first).toHaveLength(1)
        const old = first[0]!
        const oldStops = old.exp - 300

        // Within the last day of the old key: the next one is published, the old one still signs.
        clock.advance(oldStops * 1000 - clock.now() - DAY_MS / 2)
        const ahead = (yield* directory).keys
        expect(ahead.map((key) => key.kid)).toHaveLength(2)
        const next = ahead.find((key) => key.kid !== old.kid)!
        expect(next.nbf).toBe(oldStops)
        expect((yield* verify(yield* providerReceived("fakeprov/ok"), ahead)).kid).toBe(old.kid)

        // Past the old key's end: the new key signs, and both are listed while old signatures live.
        clock.advance(DAY_MS / 2 + 1000)
        const both = (yield* directory).keys
        expect(both.map((key) => key.kid).sort()).toEqual([old.kid, next.kid].sort())
        expect((yield* verify(yield* providerReceived("fakeprov/ok"), both)).kid).toBe(next.kid)

        // Once the old key's last signature has expired, it leaves the directory.
        clock.advance(300 * 1000)
        const after = (yield* directory).keys
        expect(after.map((key) => key.kid)).toEqual([next.kid])
      }))
  )
})

/** POST /v1/execute's body through the service. */
const execute = (agent: AuthenticatedAgent, body: unknown) =>
  Effect.flatMap(
    Schema.decodeUnknown(ExecuteRequest)(body).pipe(Effect.orDie),
    (request) => Effect.flatMap(Execute, (execute) => execute.execute(agent, request, "http://localhost"))
  )

layer(
  KeyDirectory.Default.pipe(
    Layer.provideMerge(livePurchasingTier("bot_auth_buy", { BASE_URL: ORIGIN, GATEWAY_TIMEOUT_MS: "5000" }))
  )
)((it) => {
  it.effect("a purchase's provider calls are signed too: the forwarder signs whoever calls it", () =>
    inRealTime(Effect.gen(function*() {
      const tools = yield* FakeToolProviderServer
      const buyer = yield* fundedAgent(10_000n)
      const before = tools.seen.length
      yield* execute(buyer, { tool: "hunter-email-finder", inputs: [emailFindInput(1), emailFindInput(2)] })
      const seen = tools.seen.slice(before)
      expect(seen).toHaveLength(2)
      const { keys } = yield* directory
      for (const request of seen) {
        expect(yield* verify(request, keys)).toEqual({ kid: keys[0]!.kid, agent: `sig1="${ORIGIN}"` })
      }
    })))
})
