import { Clock, Config, Duration, Effect, Layer } from "effect"
import { LedgerMaintenance, runEvery } from "../Ledger/LedgerMaintenance.js"
import { Providers } from "../Providers/Providers.js"
import { callHoldTtlMs } from "./CallBatches.js"
import { GatewayRepo } from "./GatewayRepo.js"

/**
 * Background work of the money area, scoped to the server and safe on every replica:
 * - the hold sweeper (every LEDGER_SWEEP_INTERVAL_MS, default 10 s) releases holds left
 *   unsettled past their time by a crash, then marks their gateway calls `abandoned`;
 * - the trial checks (every TRIAL_CHECK_INTERVAL_MS, default 10 min) take back expired
 *   trial credits and emit `trial.expiring` once per grant, 7 days ahead.
 */
export const MoneyWorkersLive = Layer.scopedDiscard(Effect.gen(function*() {
  const maintenance = yield* LedgerMaintenance
  const calls = yield* GatewayRepo
  const sweepEvery = yield* Config.integer("LEDGER_SWEEP_INTERVAL_MS").pipe(Config.withDefault(10_000))
  const trialEvery = yield* Config.integer("TRIAL_CHECK_INTERVAL_MS").pipe(Config.withDefault(600_000))
  const holdTtlMs = callHoldTtlMs((yield* Providers).timeoutMs)
  const sweep = Effect.gen(function*() {
    const released = yield* maintenance.sweepHolds
    const now = yield* Clock.currentTimeMillis
    // A pending call without a hold this old was cut off by a crash before its hold.
    const abandoned = yield* calls.markAbandoned(new Date(now), new Date(now - holdTtlMs))
    if (released > 0 || abandoned > 0) {
      yield* Effect.logInfo(`Hold sweeper released ${released} holds; ${abandoned} gateway calls marked abandoned`)
    }
  })
  yield* runEvery("hold sweeper", Duration.millis(sweepEvery), sweep)
  yield* runEvery(
    "trial checks",
    Duration.millis(trialEvery),
    Effect.zipRight(maintenance.expireTrials, maintenance.notifyExpiringTrials)
  )
})).pipe(Layer.provide(GatewayRepo.Default), Layer.provide(Providers.Default))
