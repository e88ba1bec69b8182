import { SqlClient } from "@effect/sql"
import { Clock, Duration, Effect, Option, Schedule } from "effect"
import { Events } from "../Events/Events.js"
import { Ledger } from "./Ledger.js"
import { makeLedgerEvents } from "./LedgerEvents.js"
import { LedgerRepo, type TrialGrantRow } from "./LedgerRepo.js"
import { dateString } from "./Time.js"

const BATCH = 100
const TRIAL_NOTICE_DAYS = 7

/**
 * The ledger's background duties, each safe to run on any number of replicas at once
 * (rows are taken with `FOR UPDATE SKIP LOCKED`, one transaction per row):
 * - release holds left unsettled past their time (a crash between hold and settlement);
 * - take back unspent trial credits when the trial ends;
 * - emit `trial.expiring` once per grant when its credits expire within 7 days.
 */
export class LedgerMaintenance extends Effect.Service<LedgerMaintenance>()("Ledger/LedgerMaintenance", {
  dependencies: [LedgerRepo.Default],
  effect: Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const repo = yield* LedgerRepo
    const ledger = yield* Ledger
    const events = yield* Events
    const ledgerEvents = makeLedgerEvents(events, repo)

    /** Releases every expired open hold; answers how many it released. */
    const sweepHolds = Effect.gen(function*() {
      let released = 0
      while (true) {
        const now = new Date(yield* Clock.currentTimeMillis)
        const ids = yield* repo.expiredHoldIds(now, BATCH)
        let progressed = 0
        for (const id of ids) {
          const done = yield* sql.withTransaction(Effect.gen(function*() {
            const locked = yield* repo.lockExpiredHold(id, now)
            if (Option.isNone(locked)) return false
            yield* ledger.release(id)
            return true
          })).pipe(
            Effect.catchTags({ SqlError: Effect.die, already_settled: () => Effect.succeed(false) }),
            Effect.catchTag("not_a_hold", Effect.die)
          )
          if (done) progressed++
        }
        released += progressed
        if (ids.length < BATCH || progressed === 0) return released
      }
    })

    /** Unspent trial credits of a grant: trial credits are spent before purchased ones. */
    const unspentTrial = (grant: TrialGrantRow, balance: bigint) =>
      Effect.map(repo.spentSince(grant.org_id, grant.granted_at), (spent) => {
        const left = grant.credits - spent
        const unspent = left > 0n ? left : 0n
        return unspent < balance ? unspent : balance
      })

    /** Takes back the unspent credits of every trial that has ended. */
    const expireTrials = Effect.gen(function*() {
      let expired = 0
      const now = new Date(yield* Clock.currentTimeMillis)
      const ids = yield* repo.dueTrialExpiries(now, BATCH)
      for (const id of ids) {
        const done = yield* sql.withTransaction(Effect.gen(function*() {
          const grant = yield* repo.lockDueTrial(id, now)
          if (Option.isNone(grant)) return false
          const orgId = grant.value.org_id
          const row = yield* repo.lockBalance(orgId)
          const balance = Option.match(row, { onNone: () => 0n, onSome: (r) => r.balance })
          const take = yield* unspentTrial(grant.value, balance)
          if (take > 0n) {
            yield* repo.insertEntries([{
              org_id: orgId,
              kind: "trial_expiry",
              amount: -take,
              credits: take,
              hold_id: null,
              agent_id: null,
              note: "Unspent trial credits expired",
              created_at: now
            }])
            yield* repo.removeCredits(orgId, take, now)
            yield* ledgerEvents.lowBalanceAfterRemoval(orgId)
          }
          yield* repo.markTrialExpired(id, take, now)
          return true
        })).pipe(Effect.catchTag("SqlError", Effect.die))
        if (done) expired++
      }
      return expired
    })

    /** Emits `trial.expiring` for grants ending within 7 days, once per grant. */
    const notifyExpiringTrials = sql.withTransaction(Effect.gen(function*() {
      const ms = yield* Clock.currentTimeMillis
      const now = new Date(ms)
      const claimed = yield* repo.claimExpiringNotices(now, new Date(ms + TRIAL_NOTICE_DAYS * 86_400_000), BATCH)
      let emitted = 0
      for (const grant of claimed) {
        const row = yield* repo.balanceRow(grant.org_id)
        const balance = Option.match(row, { onNone: () => 0n, onSome: (r) => r.balance })
        const credits = yield* unspentTrial(grant, balance)
        if (credits <= 0n) continue
        yield* events.emit(grant.org_id, {
          type: "trial.expiring",
          data: { credits: credits.toString(), expires_on: dateString(grant.expires_at) }
        })
        emitted++
      }
      return emitted
    })).pipe(Effect.catchTag("SqlError", Effect.die))

    return { sweepHolds, expireTrials, notifyExpiringTrials } as const
  })
}) {}

/** Runs `task` every `interval` for the life of the server; a failed round is logged and the next one runs. */
export const runEvery = <A, E, R>(name: string, interval: Duration.DurationInput, task: Effect.Effect<A, E, R>) =>
  task.pipe(
    Effect.catchAllCause((cause) => Effect.logWarning(`${name} failed; retrying next round`, cause)),
    Effect.repeat(Schedule.spaced(interval)),
    Effect.forkScoped,
    Effect.asVoid
  )
