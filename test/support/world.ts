import {
  EMULATOR_PUBLISHABLE_KEY,
  EMULATOR_SECRET_KEY,
  EMULATOR_WEBHOOK_SECRET,
  startStripeEmulator,
  type StripeEmulator
} from "@agent-gateway/stripe-emulator"
import { FetchHttpClient, HttpApiClient, HttpClient, HttpClientRequest } from "@effect/platform"
import { PgClient } from "@effect/sql-pg"
import { ConfigProvider, Effect, Exit, Layer, ManagedRuntime, Redacted } from "effect"
import type { OrgId } from "../../src/Domain/Ids.js"
import { Api } from "../../src/Http/Api.js"
import { LogLineSink } from "../../src/Layers/LogLines.js"
import { Ledger } from "../../src/Services/Ledger/Ledger.js"
import { LedgerMaintenance } from "../../src/Services/Ledger/LedgerMaintenance.js"
import { LedgerStandaloneLive } from "../../src/Services/Ledger/LedgerStandalone.js"
import { createTestDatabase, type TestDatabase } from "./database.js"
export { eventually } from "./eventually.js"
import { type EventEmitter, eventEmitter } from "./eventEmitter.js"
import { type FakeEcb, startFakeEcb } from "./fakeEcb.js"
import { type FakeProvider, seedTestCatalogue, startFakeProvider } from "./fakeProvider.js"
import { type ReceiverMode, startReceiver, type TestReceiver } from "./receiver.js"
import { request, startServer, type TestServer } from "./server.js"
import { startSmtp, type TestSmtp } from "./smtp.js"
import { startTwilio, type TestTwilio } from "./twilio.js"

/**
 * The one test world: the service started in this process on a PostgreSQL database of its
 * own, with the outside parties a suite asks for as real servers on loopback. Everything it
 * starts is stopped by `close` (also when starting fails half-way).
 */
export interface WorldOptions {
  /** Settings for the service, over the world's own (DATABASE_URL and those of the parts). */
  /** Date every tool's latest report today (default true); false leaves the shipped dates. */
  readonly freshReports?: boolean
  readonly env?: Record<string, string>
  /** A real SMTP server (SMTP_URL, MAIL_FROM). */
  readonly smtp?: boolean
  /** A fake Twilio (TWILIO_*), and X-Forwarded-For trusted from loopback so tests pick their address. */
  readonly twilio?: boolean
  /** A fake data provider (PROVIDERS_UPSTREAM) with its endpoints in the catalogue. */
  readonly provider?: boolean
  /** A fake Stripe API and ECB rates file (STRIPE_*, FX_RATES_URL), with SMTP for receipts. */
  readonly stripe?: boolean
  /** A webhook receiver, answering as `mode` at first. */
  readonly receiver?: ReceiverMode | true
  /** The event store's emitter on the world's database, to raise events without another area's endpoints. */
  readonly emitter?: boolean
  /** The time the service (and the emitter) reads, e.g. a shiftable clock's layer. */
  readonly clock?: Layer.Layer<never>
  /** Receives each of the service's log lines (which then do not go to stdout). */
  readonly logLines?: (line: string) => void
  /** Other context for the service: a stand-in for an outside party's part (DNS, a test CA). */
  readonly layer?: Layer.Layer<never>
}

export type LedgerRuntime = ReturnType<typeof ledgerRuntime>

export interface World {
  readonly db: TestDatabase
  /** The running service (a new one after `restart`). */
  readonly server: TestServer
  /** Every setting the service was started with. */
  readonly env: Record<string, string>
  readonly smtp: TestSmtp
  readonly twilio: TestTwilio
  readonly fake: FakeProvider
  readonly stripe: StripeEmulator
  readonly ecb: FakeEcb
  readonly receiver: TestReceiver
  readonly emitter: EventEmitter
  /** The ledger on the world's database (top-ups, trial grants, sweeps), made on first use. */
  readonly ledger: LedgerRuntime
  /** Stops the service and starts it again on the same database (a restart), with `extraEnv` over its settings. */
  readonly restart: (extraEnv?: Record<string, string>) => Promise<void>
  readonly close: () => Promise<void>
}

/** The ledger as the admin command line and the workers run it, on a test database. */
export const ledgerRuntime = (db: TestDatabase) =>
  ManagedRuntime.make(
    LedgerStandaloneLive.pipe(
      Layer.provideMerge(PgClient.layer({ url: Redacted.make(db.url), maxConnections: 4 })),
      Layer.provide(Layer.setConfigProvider(ConfigProvider.fromMap(new Map([["LOG_LEVEL", "Warn"]]))))
    )
  )

/** The settings that point the service at a fake Stripe and ECB rates file. */
export const stripeEnv = (stripe: StripeEmulator, ecb: FakeEcb) => ({
  STRIPE_SECRET_KEY: EMULATOR_SECRET_KEY,
  STRIPE_PUBLISHABLE_KEY: EMULATOR_PUBLISHABLE_KEY,
  STRIPE_WEBHOOK_SECRET: EMULATOR_WEBHOOK_SECRET,
  STRIPE_API_BASE: stripe.url,
  FX_RATES_URL: ecb.url,
  PAYMENT_PROVIDER_TIMEOUT_MS: "1500",
  BILLING_WORKER_INTERVAL_MS: "100"
})

const missing = (part: string, option: string): never => {
  throw new Error(`This world has no ${part}: start it with startWorld(label, { ${option}: true })`)
}

/**
 * The fixture "every tool was benchmarked today": a copy of each tool's latest report dated
 * today, so the publishing gate on a benchmark's age (35 days) holds whatever day the suite
 * runs. Suites about that gate write their own reports.
 */
export const benchmarkedToday = (db: TestDatabase) =>
  db.query(`
    INSERT INTO tool_benchmarks (tool_id, date, sample_size, accuracy, coverage, latency_p50_ms, latency_p95_ms)
    SELECT DISTINCT ON (tool_id) tool_id, current_date, sample_size, accuracy, coverage, latency_p50_ms, latency_p95_ms
    FROM tool_benchmarks ORDER BY tool_id, date DESC
    ON CONFLICT (tool_id, date) DO NOTHING`)

export const startWorld = async (label: string, options: WorldOptions = {}): Promise<World> => {
  const db = await createTestDatabase(label)
  const stops: Array<() => Promise<void>> = [() => db.drop()]
  const stopAll = async () => {
    for (const stop of stops.splice(0).reverse()) await stop()
  }
  const started = <A extends { readonly close: () => Promise<void> }>(part: A) => {
    stops.push(() => part.close())
    return part
  }
  try {
    // The benchmark schedule is off: suites see the shipped reports (dated today, below);
    // the schedule's own suite turns it on.
    const env: Record<string, string> = { DATABASE_URL: db.url, JOB_POLL_INTERVAL_MS: "100", BENCHMARK_EVERY_DAYS: "0" }
    const smtp = options.smtp || options.stripe ? started(await startSmtp()) : undefined
    if (smtp) Object.assign(env, { SMTP_URL: smtp.url, MAIL_FROM: "Service <no-reply@service.test>" })
    const twilio = options.twilio ? started(await startTwilio()) : undefined
    if (twilio) {
      Object.assign(env, {
        TWILIO_ACCOUNT_SID: twilio.accountSid,
        TWILIO_AUTH_TOKEN: twilio.authToken,
        TWILIO_FROM: twilio.from,
        TWILIO_API_BASE: twilio.apiBase,
        TRUSTED_PROXIES: "127.0.0.1"
      })
    }
    // A gateway timeout short enough that `/v1/hang` times out in seconds, long enough that
    // a loaded machine answers every other call in time.
    const fake = options.provider ? started(await startFakeProvider()) : undefined
    if (fake) Object.assign(env, { PROVIDERS_UPSTREAM: fake.url, GATEWAY_TIMEOUT_MS: "2000" })
    const stripe = options.stripe ? started(await startStripeEmulator()) : undefined
    const ecb = options.stripe ? started(await startFakeEcb()) : undefined
    if (stripe && ecb) {
      ecb.set({ date: "2026-11-20", usd: "1.0500", inr: "88.6200" })
      Object.assign(env, stripeEnv(stripe, ecb))
    }
    const receiver = options.receiver
      ? started(await startReceiver(options.receiver === true ? undefined : options.receiver))
      : undefined
    const fullEnv = { ...env, ...options.env }
    const clock = options.clock ?? Layer.empty
    const context = Layer.merge(clock, options.layer ?? Layer.empty)
    const extra = options.logLines === undefined
      ? context
      : Layer.merge(context, Layer.succeed(LogLineSink, { write: options.logLines }))

    let server = await startServer(fullEnv, extra)
    stops.push(() => server.close())
    // After the server: its start runs the migrations that create the catalogue tables.
    if (fake) await seedTestCatalogue(db)
    if (options.freshReports !== false) await benchmarkedToday(db)
    const emitter = options.emitter ? started(eventEmitter(db, {}, clock)) : undefined
    let ledger: LedgerRuntime | undefined

    return {
      db,
      get server() {
        return server
      },
      env: fullEnv,
      get smtp() {
        return smtp ?? missing("SMTP server", "smtp")
      },
      get twilio() {
        return twilio ?? missing("Twilio", "twilio")
      },
      get fake() {
        return fake ?? missing("data provider", "provider")
      },
      get stripe() {
        return stripe ?? missing("Stripe", "stripe")
      },
      get ecb() {
        return ecb ?? missing("ECB rates file", "stripe")
      },
      get receiver() {
        return receiver ?? missing("webhook receiver", "receiver")
      },
      get emitter() {
        return emitter ?? missing("event emitter", "emitter")
      },
      get ledger() {
        if (ledger === undefined) {
          const runtime = ledgerRuntime(db)
          stops.splice(1, 0, () => runtime.dispose())
          ledger = runtime
        }
        return ledger
      },
      restart: async (extraEnv = {}) => {
        await server.close()
        server = await startServer({ ...fullEnv, ...extraEnv }, extra)
      },
      close: stopAll
    }
  } catch (error) {
    // Nothing from a half-started world may outlive the suite.
    await stopAll()
    throw error
  }
}

export interface CallOptions {
  readonly token?: string | undefined
  readonly body?: unknown
  /** The client address, sent as X-Forwarded-For (worlds with `twilio` trust it from loopback). */
  readonly ip?: string | undefined
  readonly cookie?: string | undefined
  readonly headers?: Record<string, string>
}

/** One JSON request to the service, with an optional bearer, client address and cookie. */
export const call = (
  world: { readonly server: { readonly url: string } },
  method: string,
  path: string,
  options: CallOptions = {}
) =>
  request(`${world.server.url}${path}`, {
    method,
    headers: {
      ...(options.token ? { authorization: `Bearer ${options.token}` } : {}),
      ...(options.ip ? { "x-forwarded-for": options.ip } : {}),
      ...(options.cookie ? { cookie: options.cookie } : {}),
      ...options.headers
    },
    ...(options.body !== undefined ? { body: options.body } : {})
  })

export type Call = Awaited<ReturnType<typeof call>>

const clientFor = (baseUrl: string, token: string | undefined) =>
  HttpApiClient.make(Api, {
    baseUrl,
    transformClient: token === undefined ? undefined : HttpClient.mapRequest(HttpClientRequest.bearerToken(token))
  })

/** The typed client derived from the HttpApi contract: a change to the API breaks the tests' build. */
export type ApiClient = Effect.Effect.Success<ReturnType<typeof clientFor>>

/**
 * Calls the service through the typed client with `token` as its bearer, answering the
 * Exit so a test matches the decoded success or the typed error:
 * `await api(world, key, (client) => client.purchasing.execute({ payload }))`.
 */
export const api = <A, E>(
  world: { readonly server: TestServer },
  token: string | undefined,
  use: (client: ApiClient) => Effect.Effect<A, E>
): Promise<Exit.Exit<A, E>> =>
  Effect.runPromiseExit(
    Effect.flatMap(clientFor(world.server.url, token), use).pipe(Effect.provide(FetchHttpClient.layer))
  )

/** Credits the org through the ledger, as a paid top-up does. */
export const topUp = (world: { readonly ledger: LedgerRuntime }, orgId: OrgId, credits: bigint) =>
  world.ledger.runPromise(Effect.flatMap(Ledger, (ledger) => ledger.credit(orgId, credits, "top_up", "test top-up")))

export const grantTrial = (world: { readonly ledger: LedgerRuntime }, orgId: OrgId) =>
  world.ledger.runPromise(Effect.flatMap(Ledger, (ledger) => ledger.grantTrial(orgId)))

export const sweepHolds = (world: { readonly ledger: LedgerRuntime }) =>
  world.ledger.runPromise(Effect.flatMap(LedgerMaintenance, (maintenance) => maintenance.sweepHolds))
