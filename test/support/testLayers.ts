import { startStripeEmulator, type StripeEmulator } from "@agent-gateway/stripe-emulator"
import { Clock, ConfigProvider, Context, Effect, Exit, Layer, Scope, TestContext } from "effect"
import { DatabaseLive } from "../../src/Layers/Database.js"
import { AppConfig } from "../../src/Services/AppConfig.js"
import { BillingLive } from "../../src/Services/Billing/BillingLive.js"
import { Events } from "../../src/Services/Events/Events.js"
import { CallLog } from "../../src/Services/Gateway/CallLog.js"
import { Gateway } from "../../src/Services/Gateway/Gateway.js"
import { LedgerLive } from "../../src/Services/Ledger/LedgerLive.js"
import { MailOutboxLive } from "../../src/Services/Mailer/MailOutboxLive.js"
import { CreditAdjustments } from "../../src/Services/Operations/CreditAdjustments.js"
import { PurchasingLive } from "../../src/Services/Purchasing/PurchasingLive.js"
import { configOf } from "./config.js"
import { createTestDatabase, type TestDatabase } from "./database.js"
import { type FakeEcb, startFakeEcb } from "./fakeEcb.js"
import { type FakeProvider, seedTestCatalogue, startFakeProvider } from "./fakeProvider.js"
import { startFakeToolProvider } from "./fakeToolProvider.js"
import { startReceiver, type TestReceiver } from "./receiver.js"
import type { ShiftableClock } from "./shiftableClock.js"
import { startSmtp, type TestSmtp } from "./smtp.js"
import { stripeEnv } from "./world.js"

/**
 * Layers for the service tier: suites that prove a rule on the services themselves, over
 * real PostgreSQL and without HTTP, with `@effect/vitest`'s `layer(...)`/`it.layer`:
 *
 *   layer(serviceTier("approvals", Approvals.Default))((it) => { it.effect(...) })
 *
 * The suite's database is a clone of the run's template, made once when the layer is built
 * (once per `layer` block) and dropped when the block ends; the services get the SQL client,
 * the `PgClient` and the pool exactly as the service builds them (`Layers/Database.ts`).
 */

/** The suite's own database, for seeding and reading rows directly (`test/support/fixtures.ts`). */
export class SuiteDatabase extends Context.Tag("test/SuiteDatabase")<SuiteDatabase, TestDatabase>() {}

/** The service's configuration in tests: a map, never the process environment. */
export const testConfig = (env: Record<string, string>) => Layer.setConfigProvider(configOf(env))

/**
 * A clone of the template as `SuiteDatabase`, with `SqlClient`, `PgClient`, `PgPool` and
 * `AppConfig` on it; `env` is the rest of the configuration the services read.
 */
export const PgTest = (label: string, env: Record<string, string> = {}) =>
  Layer.unwrapScoped(
    Effect.gen(function*() {
      const db = yield* Effect.acquireRelease(
        Effect.promise(() => createTestDatabase(label)),
        (db) => Effect.promise(() => db.drop())
      )
      const config = testConfig({ DATABASE_URL: db.url, DATABASE_POOL_SIZE: "4", ...env })
      return Layer.mergeAll(DatabaseLive, AppConfig.Default, Layer.succeed(SuiteDatabase, db)).pipe(
        Layer.provideMerge(config)
      )
    })
  )

/**
 * `services` over the suite's database: what a service-tier suite gives `layer(...)`. The
 * database's services stay in the context beside them, for the test to read and seed.
 */
export const serviceTier = <A, E, R>(label: string, services: Layer.Layer<A, E, R>, env: Record<string, string> = {}) =>
  Layer.provideMerge(services, PgTest(label, env))

/** The webhook receiver (the outside party a delivery is posted to), as a test layer. */
export class Receiver extends Context.Tag("test/Receiver")<Receiver, TestReceiver>() {
  static readonly Test = Layer.scoped(
    Receiver,
    Effect.acquireRelease(Effect.promise(() => startReceiver()), (receiver) => Effect.promise(() => receiver.close()))
  )
}

/** A real SMTP server (test/support/smtp.ts), the outside party owner mail goes to, as a test layer. */
export class SmtpServer extends Context.Tag("test/SmtpServer")<SmtpServer, TestSmtp>() {
  static readonly Test = Layer.scoped(
    SmtpServer,
    Effect.acquireRelease(Effect.promise(() => startSmtp()), (smtp) => Effect.promise(() => smtp.close()))
  )
}

/** The fake data provider (the outside party behind the gateway), as a test layer. */
export class FakeProviderServer extends Context.Tag("test/FakeProviderServer")<FakeProviderServer, FakeProvider>() {
  static readonly Test = Layer.scoped(
    FakeProviderServer,
    Effect.acquireRelease(Effect.promise(() => startFakeProvider()), (fake) => Effect.promise(() => fake.close()))
  )
}

/** The gateway's services: calls, the calls list, the ledger and the events it raises. */
export const GatewayServices = Layer.mergeAll(Gateway.Default, CallLog.Default).pipe(
  Layer.provideMerge(LedgerLive),
  Layer.provideMerge(Events.Default)
)

/**
 * The gateway's services (calls, the calls list, the ledger and its events) over the suite's
 * database, with the fake provider's endpoints in its catalogue and PROVIDERS_UPSTREAM at it,
 * as `startWorld(label, { provider: true })` sets the server up. `FakeProviderServer` stays in
 * the context for a test to read what the provider was sent.
 */
export const gatewayTier = (label: string, env: Record<string, string> = {}) =>
  Layer.unwrapScoped(
    Effect.gen(function*() {
      const fake = yield* FakeProviderServer
      const database = PgTest(label, { PROVIDERS_UPSTREAM: fake.url, GATEWAY_TIMEOUT_MS: "2000", ...env })
      const seeded = Layer.tap(database, (context) =>
        Effect.promise(() => seedTestCatalogue(Context.get(context, SuiteDatabase))))
      return Layer.provideMerge(GatewayServices, seeded)
    })
  ).pipe(Layer.provideMerge(FakeProviderServer.Test))

/** Every purchasing service (execute, jobs, receipts, recommend, approvals, disputes) with the events and mail outbox they write to. */
export const PurchasingServices = PurchasingLive.pipe(
  Layer.provideMerge(Events.Default),
  Layer.provideMerge(MailOutboxLive)
)

/**
 * `services` built on the real clock, so the timers they fork for themselves (a flush every
 * second, a sweep every 30 s) tick in real time, while the test's own fibers (which call the
 * services) run on the TestClock provided beside them. Built on the TestClock, such a timer
 * makes `TestClock.adjust("3 hours")` step through each of its 10,800 wake-ups.
 */
export const onRealClock = <A, E, R>(services: Layer.Layer<A, E, R>) =>
  Layer.provide(services, Layer.setClock(Clock.make()))

/**
 * The purchasing services over the suite's database, their own timers on the real clock,
 * with the TestClock for the tests, provided in the layer itself (a suite in the same fork
 * may have left the test services out).
 */
export const purchasingTier = (label: string, env: Record<string, string> = {}) =>
  Layer.provideMerge(TestContext.TestContext, serviceTier(label, onRealClock(PurchasingServices), env))

/**
 * Runs a test on the real clock (mock tools' latency, a provider's timeout), the suite's
 * runtime left on the TestClock that `layer(...)` gives it: a clock set in a suite's layer
 * (`Layer.setClock`) left the next suite of the fork without its TestClock, and a TestContext
 * built after the suite's configuration hid that configuration from the tests' fibers.
 */
export const inRealTime = <A, E, R>(effect: Effect.Effect<A, E, R>) => Effect.withClock(effect, Clock.make())

/**
 * `inRealTime` on a shiftable clock (`test/support/shiftableClock.ts`): the real time, which
 * the test moves forward, with real sleeps. The workers a test starts in it
 * (`startWorkers`) run on it too, as a server given that clock does.
 */
export const inShiftedTime = (shiftable: ShiftableClock) => <A, E, R>(effect: Effect.Effect<A, E, R>) =>
  Effect.withClock(effect, shiftable.clock)

/**
 * Starts `workers` (background workers' layers as the server runs them: `WebhookWorkerLive`,
 * `MailWorkerLive`) as one replica of the service runs them: with services and a connection
 * pool of their own, on the suite's database and configuration (`env` over it) and on the
 * test's clock. `stop` ends them as a shutdown does: a try in flight is cut off and its row
 * keeps its lease. Stopped with the test's scope at the latest.
 */
export const startWorkers = <E, R>(workers: Layer.Layer<never, E, R>, env: Record<string, string> = {}) =>
  Effect.gen(function*() {
    const scope = yield* Effect.acquireRelease(Scope.make(), (scope) => Scope.close(scope, Exit.void))
    const suite = yield* Effect.configProviderWith(Effect.succeed)
    const config = ConfigProvider.orElse(ConfigProvider.fromMap(new Map(Object.entries(env))), () => suite)
    yield* Layer.buildWithScope(Layer.provide(workers, DatabaseLive), scope).pipe(Effect.withConfigProvider(config))
    return { stop: Scope.close(scope, Exit.void) }
  })

/** The fake of the tools' providers for live purchases (test/support/fakeToolProvider.ts), as a test layer. */
export class FakeToolProviderServer extends Context.Tag("test/FakeToolProviderServer")<
  FakeToolProviderServer,
  Awaited<ReturnType<typeof startFakeToolProvider>>
>() {
  static readonly Test = Layer.scoped(
    FakeToolProviderServer,
    Effect.acquireRelease(Effect.promise(() => startFakeToolProvider()), (fake) => Effect.promise(() => fake.close()))
  )
}

/**
 * Live purchases switched on against the fake tools' provider (PROVIDERS_UPSTREAM at it), with
 * the ledger beside the purchasing services for a test to top up or freeze an org; the
 * services' timers on the real clock, the TestClock last (a test runs `inRealTime`).
 */
export const livePurchasingTier = (label: string, env: Record<string, string> = {}) =>
  Layer.unwrapScoped(
    Effect.map(FakeToolProviderServer, (fake) =>
      serviceTier(label, Layer.merge(PurchasingServices, LedgerLive.pipe(Layer.provide(Events.Default))), {
        LIVE_EXECUTE_ENABLED: "true",
        PROVIDERS_UPSTREAM: fake.url,
        ...env
      }))
  ).pipe(Layer.provideMerge(FakeToolProviderServer.Test))
/** Stripe, as the Stripe emulator (packages/stripe-emulator) on a socket of its own: the outside party of billing. */
export class StripeTest extends Context.Tag("test/StripeTest")<StripeTest, StripeEmulator>() {
  static readonly Test = Layer.scoped(
    StripeTest,
    Effect.acquireRelease(Effect.promise(() => startStripeEmulator()), (stripe) => Effect.promise(() => stripe.close()))
  )
}

/** The ECB's daily rates file, served on a socket of its own, at the rates `startWorld` gives it. */
export class EcbTest extends Context.Tag("test/EcbTest")<EcbTest, FakeEcb>() {
  static readonly Test = Layer.scoped(
    EcbTest,
    Effect.acquireRelease(
      Effect.promise(async () => {
        const ecb = await startFakeEcb()
        ecb.set({ date: "2026-11-20", usd: "1.0500", inr: "88.6200" })
        return ecb
      }),
      (ecb) => Effect.promise(() => ecb.close())
    )
  )
}

/**
 * Every billing service (`BillingLive`, with the events and the mail outbox it writes to)
 * over the suite's database, speaking Stripe to `StripeTest` with the real Stripe library
 * and reading rates from `EcbTest`, both in the context for the test to drive. No worker
 * runs: a test runs a worker's step itself. `env` is over the settings `startWorld` gives
 * a world with `stripe`.
 */
export const billingTier = (label: string, env: Record<string, string> = {}) =>
  Layer.unwrapEffect(
    Effect.gen(function*() {
      const stripe = yield* StripeTest
      const ecb = yield* EcbTest
      return serviceTier(
        label,
        Layer.mergeAll(BillingLive, CreditAdjustments.Default.pipe(Layer.provide(LedgerLive))).pipe(
          Layer.provideMerge(Events.Default),
          Layer.provideMerge(MailOutboxLive)
        ),
        { ...stripeEnv(stripe, ecb), ...env }
      )
    })
  ).pipe(Layer.provideMerge(Layer.merge(StripeTest.Test, EcbTest.Test)))
