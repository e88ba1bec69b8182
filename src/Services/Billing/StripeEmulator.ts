import {
  EMULATOR_PUBLISHABLE_KEY,
  EMULATOR_SECRET_KEY,
  EMULATOR_WEBHOOK_SECRET,
  startStripeEmulator
} from "@agent-gateway/stripe-emulator"
import { HttpServer } from "@effect/platform"
import { Context, Effect, Layer, Option, Redacted } from "effect"
import { StripeProvider } from "./StripeProvider.js"

/**
 * The payment sandbox: in development without Stripe keys the service starts the Stripe
 * emulator (packages/stripe-emulator) on loopback and speaks to it with the Stripe provider,
 * unchanged. Its events are delivered, signed, to the service's own webhook route; its
 * subscriptions renew by its clock, looked at every BILLING_WORKER_INTERVAL_MS. The tag
 * holds its address while it runs (the sandbox's card form plays Stripe.js against it).
 */
export class StripeEmulator extends Context.Tag("Billing/StripeEmulator")<
  StripeEmulator,
  Option.Option<{ readonly url: string }>
>() {
  static readonly none = Layer.succeed(StripeEmulator, Option.none())
}

export const StripeEmulatorLive = (timeoutMs: number, renewEveryMs: number) =>
  Layer.unwrapScoped(Effect.gen(function*() {
    // The service's own listening address, once it has one: the webhook route is on it.
    const server = yield* Effect.serviceOption(HttpServer.HttpServer)
    const webhookUrl = Option.match(server, {
      onNone: () => undefined,
      onSome: (listening) =>
        listening.address._tag === "TcpAddress"
          ? `http://127.0.0.1:${listening.address.port}/v1/billing/webhook`
          : undefined
    })
    const emulator = yield* Effect.acquireRelease(
      Effect.promise(() => startStripeEmulator({ webhookUrl: () => webhookUrl, renewEveryMs })),
      (running) => Effect.promise(() => running.close())
    )
    yield* Effect.logInfo(`Payment sandbox: the Stripe emulator at ${emulator.url} (no money moves)`)
    const settings = {
      secretKey: Redacted.make(EMULATOR_SECRET_KEY),
      publishableKey: EMULATOR_PUBLISHABLE_KEY,
      webhookSecret: Redacted.make(EMULATOR_WEBHOOK_SECRET),
      apiBase: Option.some(emulator.url)
    }
    return Layer.merge(
      StripeProvider(settings, timeoutMs, "sandbox"),
      Layer.succeed(StripeEmulator, Option.some({ url: emulator.url }))
    )
  }))
