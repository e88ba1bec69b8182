import { Clock, Config, Duration, Effect, Layer } from "effect"
import { runEvery } from "../Ledger/LedgerMaintenance.js"
import { OAuthRecordsRepo } from "./OAuthRecordsRepo.js"

const BATCH = 1_000

/**
 * Deletes the authorization server's records past their expiry (codes, access tokens,
 * interactions, sessions: a client refreshing every ten minutes leaves a row each time),
 * every OAUTH_SWEEP_INTERVAL_MS (default 1 minute), a batch at a time until none is left.
 * A record past its expiry is never found anyway; this only keeps the table small.
 */
export const RecordsSweepLive = Layer.scopedDiscard(Effect.gen(function*() {
  const records = yield* OAuthRecordsRepo
  const everyMs = yield* Config.integer("OAUTH_SWEEP_INTERVAL_MS").pipe(Config.withDefault(60_000))
  const sweep = Effect.gen(function*() {
    const now = new Date(yield* Clock.currentTimeMillis)
    let deleted = BATCH
    while (deleted === BATCH) deleted = yield* records.deleteExpired(now, BATCH)
  })
  yield* runEvery("OAuth record sweep", Duration.millis(everyMs), sweep)
})).pipe(Layer.provide(OAuthRecordsRepo.Default))
