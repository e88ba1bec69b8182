import { startStripeEmulator, type StripeEmulator } from "@agent-gateway/stripe-emulator"
import { ConfigProvider, Context, Effect, Layer } from "effect"
import { DatabaseLive } from "../../src/Layers/Database.js"
import { AppConfig } from "../../src/Services/AppConfig.js"
import { BillingLive } from "../../src/Services/Billing/BillingLive.js"
import { Events } from "../../src/Services/Events/Events.js"
import { LedgerLive } from "../../src/Services/Ledger/LedgerLive.js"
import { MailOutboxLive } from "../../src/Services/Mailer/MailOutboxLive.js"
import { CreditAdjustments } from "../../src/Services/Operations/CreditAdjustments.js"
import { createTestDatabase, type TestDatabase } from "./database.js"
import { type FakeEcb, startFakeEcb } from "./fakeEcb.js"
import { startReceiver, type TestReceiver } from "./receiver.js"
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
export const testConfig = (env: Record<string, string>) =>
  Layer.setConfigProvider(ConfigProvider.fromMap(new Map(Object.entries({ PORT: "0", ...env }))))

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
