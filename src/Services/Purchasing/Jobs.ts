import { SqlClient } from "@effect/sql"
import { Duration, Effect, Layer, Option, Schedule } from "effect"
import { randomUUID } from "node:crypto"
import type { JobId, OrgId, ReceiptId } from "../../Domain/Ids.js"
import { amountOf } from "../../Domain/Money.js"
import type { PurchaseJob } from "../../Domain/PurchaseJob.js"
import type { Job } from "../../Domain/Purchasing.js"
import { currentDate } from "../../Domain/Timestamps.js"
import { NotFound } from "../../Errors/ApiErrors.js"
import { Events } from "../Events/Events.js"
import { Ledger } from "../Ledger/Ledger.js"
import { IdempotencyRepo } from "./IdempotencyRepo.js"
import { InterruptedPurchases } from "./InterruptedPurchases.js"
import { ItemRunner } from "./ItemRunner.js"
import { ItemsRepo } from "./ItemsRepo.js"
import { JobSignal } from "./JobSignal.js"
import { JobsRepo } from "./JobsRepo.js"
import { PurchasingConfig, purchasingRules } from "./PurchasingConfig.js"
import { Receipts, resultItemView } from "./Receipts.js"
import { ReceiptsRepo } from "./ReceiptsRepo.js"

/**
 * Jobs: purchases of more than 25 inputs. A job is a durable row; workers take it with
 * `FOR UPDATE SKIP LOCKED` under a lease they renew after every batch, and take its items
 * 25 at a time the same way, each under a claim (see PurchasingConfig for the times). A
 * worker that stops gives its claims and lease back; one that dies leaves them to lapse,
 * after which another replica resumes the job. Two replicas never run the same item: an
 * item is claimed by one statement and settled only by the holder of its claim.
 *
 * Two hours after a job was accepted, items not yet run become `expired` and their holds
 * are released. A finished job emits `job.completed` (`passed` counts passed and partial
 * items: both passed their check and were charged).
 */
const RESULT_RETENTION_MS = 30 * 24 * 60 * 60 * 1000

export class JobRunner extends Effect.Service<JobRunner>()("Purchasing/JobRunner", {
  dependencies: [
    ReceiptsRepo.Default,
    ItemsRepo.Default,
    JobsRepo.Default,
    IdempotencyRepo.Default,
    ItemRunner.Default,
    Receipts.Default,
    InterruptedPurchases.Default,
    PurchasingConfig.Default
  ],
  effect: Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const receiptRows = yield* ReceiptsRepo
    const itemRows = yield* ItemsRepo
    const jobRows = yield* JobsRepo
    const keyRows = yield* IdempotencyRepo
    const items = yield* ItemRunner
    const receipts = yield* Receipts
    const ledger = yield* Ledger
    const events = yield* Events
    const interrupted = yield* InterruptedPurchases
    const config = yield* PurchasingConfig
    const contextOf = interrupted.contextOf

    const receiptRow = (receiptId: ReceiptId) =>
      Effect.flatMap(receiptRows.receipt(receiptId), (found) =>
        Option.match(found, {
          onNone: () => Effect.dieMessage(`Receipt ${receiptId} of a job is gone`),
          onSome: Effect.succeed
        }))

    /** Items not run by the deadline become expired and their holds go back. */
    const expire = (receiptId: string) =>
      sql.withTransaction(Effect.gen(function*() {
        const at = yield* currentDate
        const expired = yield* itemRows.expirePending(
          receiptId,
          at,
          "The job's 2-hour run time ended before this item ran; its hold was released"
        )
        for (const item of expired) {
          if (item.hold_id !== null) {
            yield* ledger.release(item.hold_id).pipe(Effect.catchTag("already_settled", () => Effect.void))
          }
        }
        return expired.length
      })).pipe(Effect.catchTags({ SqlError: Effect.die, not_a_hold: Effect.die }))

    const complete = (job: PurchaseJob, owner: string) =>
      sql.withTransaction(Effect.gen(function*() {
        const locked = yield* jobRows.lockJobForCompletion(job.id, owner)
        if (Option.isNone(locked)) return false
        const at = yield* currentDate
        yield* receiptRows.completeReceipt(job.receipt_id, at)
        yield* jobRows.completeJob(job.id, at)
        const totals = yield* receipts.totals(job.org_id, job.receipt_id)
        yield* events.emit(job.org_id, {
          type: "job.completed",
          data: {
            job_id: job.id,
            status: "done",
            receipt_id: job.receipt_id,
            item_count: totals.item_count,
            passed: totals.counts.passed + totals.counts.partial,
            expired: totals.counts.expired
          }
        })
        return true
      })).pipe(Effect.catchTags({ SqlError: Effect.die, not_found: Effect.die }))

    /**
     * Runs a claimed job until it is done, its deadline passes or (tests) `maxBatches`
     * batches ran. Answers whether the job finished.
     */
    const process = (job: PurchaseJob, owner: string, maxBatches = Number.POSITIVE_INFINITY) =>
      Effect.gen(function*() {
        const receipt = yield* receiptRow(job.receipt_id)
        const context = yield* contextOf(receipt)
        let batches = 0
        while (true) {
          const at = yield* currentDate
          if (at.getTime() >= job.deadline_at.getTime()) {
            yield* expire(job.receipt_id)
            const open = yield* itemRows.countOpenItems(job.receipt_id)
            if (open.running === 0) return yield* complete(job, owner)
          }
          if (batches >= maxBatches) return false
          yield* itemRows.reclaimLapsed(job.receipt_id, at)
          const batch = at.getTime() >= job.deadline_at.getTime()
            ? []
            : yield* itemRows.claimItems(
              job.receipt_id,
              purchasingRules.batchSize,
              owner,
              at,
              new Date(at.getTime() + purchasingRules.itemClaimMs)
            )
          if (batch.length === 0) {
            const open = yield* itemRows.countOpenItems(job.receipt_id)
            if (open.pending === 0 && open.running === 0) return yield* complete(job, owner)
            // Items still claimed by a replica that died: wait for their claims to lapse.
            yield* Effect.sleep(Duration.seconds(1))
            continue
          }
          yield* items.run(context, batch, owner, () => Effect.succeed({ value: undefined, writes: Effect.void }))
          batches++
          const renewedAt = yield* currentDate
          const renewed = yield* jobRows.renewJobLease(
            job.id,
            owner,
            new Date(renewedAt.getTime() + purchasingRules.jobLeaseMs)
          )
          if (!renewed) return false
        }
      }).pipe(
        // A worker that stops mid-job gives back its claims and lease, so the job resumes
        // at once on the next start or on another replica.
        Effect.onInterrupt(() =>
          Effect.ignore(Effect.zipRight(itemRows.unclaimOwner(owner), jobRows.releaseJobLease(job.id, owner)))
        )
      )

    /** Takes the next job nobody is running and runs it; answers false when there was none. */
    const runNext = (owner: string, options: { readonly maxBatches?: number } = {}) =>
      Effect.gen(function*() {
        const at = yield* currentDate
        const job = yield* jobRows.claimJob(owner, at, new Date(at.getTime() + purchasingRules.jobLeaseMs))
        if (Option.isNone(job)) return false
        const finished = yield* process(job.value, owner, options.maxBatches)
        if (!finished) yield* jobRows.releaseJobLease(job.value.id, owner)
        return true
      })

    /**
     * Finishes direct purchases whose replica died mid-way (their items' claims, renewed
     * with the purchase's lease, lapsed): see InterruptedPurchases. Also forgets expired
     * keys and old results.
     */
    const sweep = Effect.gen(function*() {
      const at = yield* currentDate
      const stale = yield* sql.withTransaction(Effect.gen(function*() {
        const rows = yield* receiptRows.staleDirectReceipts(new Date(at.getTime() - config.leaseMs), at, 20)
        for (const receipt of rows) yield* interrupted.finish(receipt)
        return rows.length
      })).pipe(Effect.catchTag("SqlError", Effect.die))
      yield* keyRows.purgeKeys(at)
      yield* itemRows.purgeResults(new Date(at.getTime() - RESULT_RETENTION_MS))
      return stale
    })

    /** `GET /v1/jobs/{id}`: status, progress and every item's outcome (with results). */
    const get = (orgId: OrgId, id: JobId) =>
      Effect.gen(function*() {
        const job = yield* jobRows.job(orgId, id)
        if (Option.isNone(job)) return yield* new NotFound({ message: "No job with that id in this org" })
        const totals = yield* receipts.totals(orgId, job.value.receipt_id)
        const rows = yield* itemRows.items(job.value.receipt_id)
        return {
          id: job.value.id,
          status: job.value.status,
          receipt_id: job.value.receipt_id,
          tool: totals.tool,
          item_count: totals.item_count,
          progress: { done: totals.item_count - totals.counts.pending, total: totals.item_count },
          counts: totals.counts,
          charged: amountOf(totals.charged_credits),
          created_at: job.value.created_at,
          started_at: job.value.started_at,
          completed_at: job.value.completed_at,
          deadline_at: job.value.deadline_at,
          items: rows.map(resultItemView)
        } satisfies Job
      })

    /**
     * Gives back the item claims and job leases of `owner`, whose run failed half-way (the
     * database went away mid-batch, say): otherwise its job would wait for them to lapse.
     */
    const giveBack = (owner: string) => Effect.zipRight(itemRows.unclaimOwner(owner), jobRows.releaseLeasesOf(owner))

    return { runNext, sweep, get, process, giveBack } as const
  })
}) {}

/**
 * The job workers of one replica (JOB_WORKERS fibers) and the sweeper, scoped to the
 * server: each worker takes the next job, or waits for this replica's signal or the poll
 * interval. Stopping the server interrupts them; they give back what they held.
 */
export const JobWorkersLive = Layer.scopedDiscard(Effect.gen(function*() {
  const runner = yield* JobRunner
  const config = yield* PurchasingConfig
  const signal = yield* JobSignal
  const replica = randomUUID()

  const worker = (n: number) => {
    const owner = `worker:${replica}:${n}`
    const idle = signal.wait.pipe(Effect.timeout(Duration.millis(config.jobPollIntervalMs)), Effect.ignore)
    return Effect.gen(function*() {
      const ran = yield* runner.runNext(owner)
      if (!ran) yield* idle
    }).pipe(
      Effect.catchAllCause((cause) =>
        Effect.logError("Job worker failed; giving back what it held, then retrying", cause).pipe(
          // Until the database answers again (the failure may be its outage).
          Effect.zipRight(
            runner.giveBack(owner).pipe(
              Effect.sandbox,
              Effect.retry(Schedule.spaced(Duration.seconds(1))),
              Effect.ignore
            )
          ),
          Effect.zipRight(Effect.sleep(Duration.seconds(1)))
        )
      ),
      Effect.forever
    )
  }

  for (let n = 0; n < config.jobWorkers; n++) yield* Effect.forkScoped(worker(n))
  yield* Effect.forkScoped(
    runner.sweep.pipe(
      Effect.catchAllCause((cause) => Effect.logError("Purchase sweeper failed", cause)),
      Effect.repeat(Schedule.spaced(Duration.seconds(30)))
    )
  )
}))
