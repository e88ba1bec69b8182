import { EMULATOR_FACILITATOR_ADDRESS } from "@agent-gateway/x402-facilitator"
import { describe, expect, it } from "@effect/vitest"
import { Cause, Effect, Exit, Layer } from "effect"
import { AppConfig } from "../../src/Services/AppConfig.js"
import { Facilitator } from "../../src/Services/X402/Facilitator.js"
import { FacilitatorAddressLive } from "../../src/Services/X402/FacilitatorAddressLive.js"
import { X402Config } from "../../src/Services/X402/X402Config.js"
import { testConfig } from "../support/testLayers.js"

/**
 * The x402 settings as the service reads them: off by default in every mode; in production a
 * facilitator and a payee are required (the service refuses to start, saying which); in
 * development without a facilitator URL the emulator is started on loopback and spoken to.
 */
const settingsWith = (env: Record<string, string>) =>
  X402Config.pipe(
    Effect.provide(X402Config.Default.pipe(Layer.provide(AppConfig.Default), Layer.provide(testConfig(env))))
  )

const refusal = (exit: Exit.Exit<unknown, unknown>) => Exit.isFailure(exit) ? Cause.pretty(exit.cause) : "started"

describe("x402 settings", () => {
  it.effect("are off by default, in development and in production", () =>
    Effect.gen(function*() {
      expect((yield* settingsWith({})).enabled).toBe(false)
      expect((yield* settingsWith({ SERVICE_ENV: "production" })).enabled).toBe(false)
    }))

  it.effect("refuse to start in production without a facilitator URL or a payee, saying which", () =>
    Effect.gen(function*() {
      const noUrl = yield* Effect.exit(settingsWith({ SERVICE_ENV: "production", X402_ENABLED: "true" }))
      expect(refusal(noUrl)).toContain("X402_FACILITATOR_URL is required in production")
      const noPayee = yield* Effect.exit(settingsWith({
        SERVICE_ENV: "production",
        X402_ENABLED: "true",
        X402_FACILITATOR_URL: "https://facilitator.example"
      }))
      expect(refusal(noPayee)).toContain("X402_PAY_TO")
      const ready = yield* settingsWith({
        SERVICE_ENV: "production",
        X402_ENABLED: "true",
        X402_FACILITATOR_URL: "https://facilitator.example/",
        X402_PAY_TO: "0x00000000000000000000000000000000000c0ffe"
      })
      expect(ready.facilitatorUrl).toEqual(expect.objectContaining({ value: "https://facilitator.example" }))
    }))

  it.effect("refuse a network that is not CAIP-2, an asset or payee that is not an address, a rate below 1", () =>
    Effect.gen(function*() {
      const on = { X402_ENABLED: "true" }
      expect(refusal(yield* Effect.exit(settingsWith({ ...on, X402_NETWORK: "base" })))).toContain("CAIP-2")
      expect(refusal(yield* Effect.exit(settingsWith({ ...on, X402_ASSET: "usdc" })))).toContain("X402_ASSET")
      expect(refusal(yield* Effect.exit(settingsWith({ ...on, X402_PAY_TO: "me" })))).toContain("X402_PAY_TO")
      expect(refusal(yield* Effect.exit(settingsWith({ ...on, X402_UNITS_PER_CREDIT: "0" })))).toContain(
        "X402_UNITS_PER_CREDIT"
      )
    }))

  it.scoped("in development without a facilitator URL, start the emulator and build requirements with it", () =>
    Effect.gen(function*() {
      const facilitator = yield* Facilitator
      expect(facilitator.emulated).toBe(true)
      expect(facilitator.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/)
      const upto = yield* facilitator.requirements("upto", 40_000n)
      expect(upto).toMatchObject({
        scheme: "upto",
        network: "eip155:84532",
        amount: "40000",
        extra: { facilitatorAddress: EMULATOR_FACILITATOR_ADDRESS }
      })
      const exact = yield* facilitator.requirements("exact", 10_000n)
      expect(exact).toMatchObject({ scheme: "exact", amount: "10000", extra: { name: "USDC", version: "2" } })
    }).pipe(
      Effect.provide(
        Facilitator.Default.pipe(
          Layer.provideMerge(FacilitatorAddressLive),
          Layer.provideMerge(X402Config.Default),
          Layer.provide(AppConfig.Default),
          Layer.provide(testConfig({ X402_ENABLED: "true" }))
        )
      )
    ))
})
