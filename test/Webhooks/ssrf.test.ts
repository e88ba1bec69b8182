import { expect, layer } from "@effect/vitest"
import { Effect, Either, Layer } from "effect"
import { describe, it } from "vitest"
import { Events } from "../../src/Services/Events/Events.js"
import { addressRefusal } from "../../src/Services/Webhooks/AddressPolicy.js"
import { WebhookDelivery } from "../../src/Services/Webhooks/Delivery.js"
import { specialNameRefusal } from "../../src/Services/Webhooks/SpecialNames.js"
import { DnsResolver, postWebhook } from "../../src/Services/Webhooks/WebhookHttp.js"
import { Webhooks } from "../../src/Services/Webhooks/Webhooks.js"
import { fakeDns } from "../support/dns.js"
import { actorOf, seedOrg } from "../support/fixtures.js"
import { Receiver, serviceTier, SuiteDatabase } from "../support/testLayers.js"

/**
 * Server-side request forgery, on the webhook services without HTTP: which webhook URLs are
 * refused when saved (production rules: addresses, schemes, and names that cannot reach the
 * public internet), and the check at delivery time on the address actually connected to
 * (DNS rebinding). The wire of a refusal (400 and the error body) is in webhooks.test.ts.
 */
const refused = [
  ["10/8", "https://10.0.0.1/hook"],
  ["10/8 top", "https://10.255.255.254/hook"],
  ["172.16/12", "https://172.16.0.1/hook"],
  ["172.16/12 top", "https://172.31.255.254/hook"],
  ["192.168/16", "https://192.168.1.10/hook"],
  ["127/8", "https://127.0.0.1/hook"],
  ["127/8 other", "https://127.12.0.1:8443/hook"],
  ["127/8 decimal form", "https://2130706433/hook"],
  ["127/8 short form", "https://127.1/hook"],
  ["localhost", "https://localhost/hook"],
  ["0/8", "https://0.0.0.0/hook"],
  ["0/8 other", "https://0.1.2.3/hook"],
  ["169.254/16 (cloud metadata)", "https://169.254.169.254/latest"],
  ["100.64/10", "https://100.64.0.1/hook"],
  ["100.64/10 top", "https://100.127.255.254/hook"],
  ["198.18/15", "https://198.18.0.1/hook"],
  ["198.18/15 top", "https://198.19.255.254/hook"],
  ["240/4", "https://240.0.0.1/hook"],
  ["broadcast", "https://255.255.255.255/hook"],
  ["multicast", "https://224.0.0.1/hook"],
  ["documentation", "https://192.0.2.1/hook"],
  ["::1", "https://[::1]/hook"],
  ["::", "https://[::]/hook"],
  ["fc00::/7", "https://[fc00::1]/hook"],
  ["fc00::/7 (fd)", "https://[fd12:3456::1]/hook"],
  ["fe80::/10", "https://[fe80::1]/hook"],
  ["::ffff:127.0.0.1", "https://[::ffff:127.0.0.1]/hook"],
  ["::ffff:10.0.0.1", "https://[::ffff:10.0.0.1]/hook"],
  ["::ffff:192.168.0.1 (hex)", "https://[::ffff:c0a8:1]/hook"],
  ["NAT64 of 10.0.0.1", "https://[64:ff9b::a00:1]/hook"],
  ["6to4 of 10.0.0.1", "https://[2002:a00:1::1]/hook"],
  ["IPv6 multicast", "https://[ff02::1]/hook"]
] as const

/** What the stand-in DNS answers; a name not listed does not resolve. */
const nameAnswers = new Map<string, Array<string>>([
  ["hooks.example.com", ["93.184.216.34"]],
  ["8.8.8.8.nip.io", ["8.8.8.8"]],
  ["localhost.", ["127.0.0.1"]],
  ["foo.localhost", ["127.0.0.1"]],
  ["10.0.0.1.nip.io", ["10.0.0.1"]],
  ["private.example.com", ["10.1.2.3", "fd00::1"]]
])

/** What the stand-in DNS answers for each name under development rules (the rebinding cases). */
const rebindAnswers = new Map<string, Array<string>>()

/** The webhook services over the suite's database, under `env` and the stand-in DNS `answers`. */
const webhookServices = (label: string, answers: Map<string, Array<string>>, env: Record<string, string> = {}) =>
  serviceTier(
    label,
    Layer.mergeAll(Webhooks.Default, WebhookDelivery.Default).pipe(Layer.provideMerge(Events.Default)),
    env
  ).pipe(Layer.provideMerge(fakeDns(answers)))

/** Saves `url` as a new org's endpoint: the endpoint, or the refusal. */
const create = (url: string) =>
  Effect.gen(function*() {
    const db = yield* SuiteDatabase
    const org = yield* Effect.promise(() => seedOrg(db))
    return yield* Effect.either((yield* Webhooks).create(actorOf(org), { url }))
  })

/** The refusal `url` is met with: its code and message. */
const refusalOf = (url: string) =>
  Effect.map(create(url), (made) => {
    if (Either.isRight(made)) throw new Error(`${url} was accepted`)
    return { code: made.left._tag, message: (made.left as { message: string }).message }
  })

layer(
  webhookServices("events_ssrf", nameAnswers, {
    SERVICE_ENV: "production",
    SECRETS_ENCRYPTION_KEY: "test-key-for-the-ssrf-suite-0123456789"
  })
)("webhook URL rules in production", (it) => {
  it.effect.each(refused)("refuses %s (%s) with invalid_input", ([_label, url]) =>
    Effect.gen(function*() {
      expect(yield* refusalOf(url)).toEqual({ code: "invalid_input", message: expect.any(String) })
    }))

  it.effect("refuses plain http, even to a public address, and http://localhost", () =>
    Effect.gen(function*() {
      for (const url of ["http://93.184.216.34/hook", "http://localhost:8080/hook", "http://127.0.0.1/hook"]) {
        const refusal = yield* refusalOf(url)
        expect(refusal.code, url).toBe("invalid_input")
        expect(refusal.message, url).toMatch(/https/)
      }
    }))

  it.effect("allows https to a public address (IPv4 and IPv6)", () =>
    Effect.gen(function*() {
      for (
        const url of [
          "https://93.184.216.34/hook",
          "https://[2606:4700:4700::1111]/hook",
          "https://8.8.8.8:8443/path?x=1"
        ]
      ) {
        const made = yield* create(url)
        expect(Either.isRight(made) && made.right.webhook.url, url).toBe(url)
      }
    }))

  const refusedNames: Array<[string, RegExp]> = [
    ["https://localhost./hook", /ends with a dot/],
    ["https://foo.localhost/hook", /special-use name/],
    ["https://hooks.invalid/hook", /special-use name/],
    ["https://printer.local/hook", /special-use name/],
    ["https://db.internal/hook", /special-use name/],
    ["https://router.home.arpa/hook", /special-use name/],
    ["https://10.0.0.1.nip.io/hook", /names the address 10\.0\.0\.1/],
    ["https://app-192-168-1-1.sslip.io/hook", /names the address 192\.168\.1\.1/],
    ["https://7f000001.nip.io/hook", /names the address 127\.0\.0\.1/],
    ["https://nowhere.example.com/hook", /does not resolve/],
    ["https://private.example.com/hook", /not a public address/]
  ]
  it.effect.each(refusedNames)("refuses the name of %s with invalid_input", ([url, message]) =>
    Effect.gen(function*() {
      expect(yield* refusalOf(url)).toEqual({ code: "invalid_input", message: expect.stringMatching(message) })
    }))

  it.effect("accepts a name resolving to a public address, even one carrying a public address", () =>
    Effect.gen(function*() {
      for (const url of ["https://hooks.example.com/hook", "https://8.8.8.8.nip.io/hook"]) {
        const made = yield* create(url)
        expect(Either.isRight(made) && made.right.webhook.url, url).toBe(url)
      }
    }))
})

describe("pure rules", () => {
  it("classifies addresses the same way the table says (pure policy)", () => {
    const strict = { allowLoopback: false }
    for (
      const address of [
        "10.1.1.1",
        "172.20.0.1",
        "192.168.0.1",
        "127.0.0.1",
        "0.0.0.0",
        "169.254.0.1",
        "100.64.1.1",
        "198.18.1.1",
        "240.1.1.1",
        "::1",
        "fc00::1",
        "fe80::1",
        "::ffff:127.0.0.1",
        "::ffff:10.0.0.1"
      ]
    ) {
      expect(addressRefusal(address, strict), address).toBeDefined()
    }
    for (const address of ["93.184.216.34", "1.1.1.1", "2606:4700::1111", "::ffff:8.8.8.8"]) {
      expect(addressRefusal(address, strict), address).toBeUndefined()
    }
    expect(addressRefusal("127.0.0.1", { allowLoopback: true })).toBeUndefined()
    expect(addressRefusal("::1", { allowLoopback: true })).toBeUndefined()
    expect(addressRefusal("10.0.0.1", { allowLoopback: true })).toBeDefined()
  })

  it("judges names alone the same way (pure rule)", () => {
    expect(specialNameRefusal("example.com")).toBeUndefined()
    expect(specialNameRefusal("api.stripe.com")).toBeUndefined()
    expect(specialNameRefusal("1.2.3.4.nip.io")).toBeUndefined()
    expect(specialNameRefusal("LOCALHOST")).toBeDefined()
    expect(specialNameRefusal("a.b.onion")).toBeDefined()
    expect(specialNameRefusal("172-16-0-1.sslip.io")).toBeDefined()
  })
})

layer(webhookServices("events_ssrf_dev", rebindAnswers).pipe(Layer.provideMerge(Receiver.Test)))(
  "the address connected to is checked at every delivery",
  (it) => {
    it.effect("refuses a name that resolved to loopback when saved but to a private address at delivery (DNS rebinding)", () =>
      Effect.gen(function*() {
        const receiver = yield* Receiver
        const webhooks = yield* Webhooks
        const db = yield* SuiteDatabase
        const org = yield* Effect.promise(() => seedOrg(db))
        const actor = actorOf(org)
        rebindAnswers.set("rebind.test", ["127.0.0.1"])
        const made = yield* webhooks.create(actor, { url: `http://rebind.test:${receiver.port}/rebind` })
        const test = () => webhooks.sendTest(actor, made.webhook.id)

        rebindAnswers.set("rebind.test", ["10.0.0.7"])
        const blocked = yield* test()
        expect(blocked).toMatchObject({ status: "pending", last_status_code: null })
        expect(blocked.last_error).toMatch(
          /^Address not allowed: rebind.test resolves to 10.0.0.7 is not a public address/
        )

        rebindAnswers.set("rebind.test", ["127.0.0.1", "169.254.169.254"])
        const mixed = yield* test()
        expect(mixed.last_error).toMatch(/169.254.169.254/)
        expect(receiver.received.filter((r) => r.path === "/rebind")).toHaveLength(0)

        // The answer the check passes is the address the connection goes to.
        rebindAnswers.set("rebind.test", ["127.0.0.1"])
        const delivered = yield* test()
        expect(delivered).toMatchObject({ status: "delivered", last_status_code: 200 })
        const got = receiver.received.filter((r) => r.path === "/rebind")
        expect(got).toHaveLength(1)
        expect(got[0]!.headers.host).toBe(`rebind.test:${receiver.port}`)
      }))

    it.effect("refuses a private answer for a name when the URL is saved", () =>
      Effect.gen(function*() {
        rebindAnswers.set("internal.test", ["192.168.10.10"])
        const refusal = yield* refusalOf("https://internal.test/hook")
        expect(refusal.code).toBe("invalid_input")
        expect(refusal.message).toContain("192.168.10.10")
      }))

    it.effect("never connects to a forbidden literal or resolved address under production rules", () =>
      Effect.flatMap(Receiver, (receiver) =>
        Effect.promise(async () => {
          const production = { allowLoopback: false }
          const run = (url: string, resolver?: (host: string) => Array<string>) =>
            Effect.runPromise(
              postWebhook({ url, headers: { "Content-Type": "application/json" }, body: "{}", policy: production })
                .pipe(
                  resolver === undefined
                    ? (e) => e
                    : Effect.provideService(DnsResolver, {
                      lookup: async (host: string) =>
                        resolver(host).map((address) => ({ address, family: address.includes(":") ? 6 : 4 }))
                    })
                )
            )
          const before = receiver.received.length
          expect(await run(`http://127.0.0.1:${receiver.port}/direct`)).toMatchObject({
            delivered: false,
            error: expect.stringMatching(/^Address not allowed/)
          })
          expect(await run(`http://[::ffff:127.0.0.1]:${receiver.port}/direct`)).toMatchObject({
            delivered: false,
            error: expect.stringMatching(/^Address not allowed/)
          })
          expect(await run(`http://receiver.test:${receiver.port}/direct`, () => ["127.0.0.1"])).toMatchObject({
            delivered: false,
            error: expect.stringMatching(/^Address not allowed/)
          })
          expect(await run(`http://receiver.test:${receiver.port}/direct`, () => ["::1"])).toMatchObject({
            delivered: false
          })
          expect(receiver.received.length).toBe(before)
          // Loopback allowed (development rules): the same request goes through.
          const allowed = await Effect.runPromise(
            postWebhook({
              url: `http://receiver.test:${receiver.port}/direct`,
              headers: {},
              body: "{}",
              policy: { allowLoopback: true }
            }).pipe(
              Effect.provideService(DnsResolver, { lookup: async () => [{ address: "127.0.0.1", family: 4 }] })
            )
          )
          expect(allowed).toEqual({ delivered: true, statusCode: 200, error: null })
        })))
  }
)
