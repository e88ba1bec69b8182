import { Clock, Duration, Effect, Layer } from "effect"
import { runEvery } from "../Ledger/LedgerMaintenance.js"
import { X402Config } from "./X402Config.js"
import { X402Payments } from "./X402Payments.js"
import { type PaymentRow, X402Repo } from "./X402Repo.js"

/**
 * Finishes x402 payments a crash (or a facilitator that did not answer) left open, every
 * X402_SWEEP_INTERVAL_MS, safe on every replica (each row is taken under a lease, skipping
 * rows another replica holds). The rule (docs/decisions.md, "x402 on the service"):
 *
 * - `running` past its lease: cut off before its outcome was recorded, so the payer got no
 *   answer for it: abandoned, nothing settled.
 * - `due` past its lease: the outcome and its answer are recorded, so what is due is owed:
 *   settled while the authorisation has at least SETTLE_MARGIN left, abandoned (nothing
 *   settled) once it has not. A facilitator that refuses ends it `refused`; one that does not
 *   answer leaves it for the next round.
 */
const SETTLE_MARGIN_MS = 10_000
const BATCH = 50
const SWEEP_LEASE_MS = 60_000

export const sweepPayments = Effect.gen(function*() {
  const repo = yield* X402Repo
  const payments = yield* X402Payments
  const now = yield* Clock.currentTimeMillis
  const taken = yield* repo.lapsed(new Date(now), new Date(now + SWEEP_LEASE_MS), BATCH)
  const finish = (row: PaymentRow) => {
    if (row.status === "running") {
      return repo.markUnsettled(row.id, "abandoned", "cut off before its outcome was recorded", new Date(now), [
        "running"
      ])
    }
    if (row.valid_until.getTime() - now < SETTLE_MARGIN_MS) {
      return repo.markUnsettled(row.id, "abandoned", "its authorisation expired before it was settled", new Date(now), [
        "due"
      ])
    }
    return payments.settleDue(row).pipe(
      Effect.asVoid,
      Effect.catchAll((error) => Effect.logWarning(`x402 payment ${row.id} not settled this round: ${error.message}`))
    )
  }
  yield* Effect.forEach(taken, finish, { concurrency: 5, discard: true })
  if (taken.length > 0) yield* Effect.logInfo(`x402 sweeper finished ${taken.length} open payments`)
  return taken.length
})

export const X402SweeperLive = Layer.scopedDiscard(Effect.gen(function*() {
  const config = yield* X402Config
  yield* runEvery("x402 sweeper", Duration.millis(config.sweepIntervalMs), sweepPayments)
}))
