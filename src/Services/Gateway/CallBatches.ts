import { SqlClient } from "@effect/sql"
import { Data, Effect, Either } from "effect"
import { randomUUID } from "node:crypto"
import type { AuthenticatedAgent } from "../../Domain/Current.js"
import { type CallId, HoldId } from "../../Domain/Ids.js"
import type { AupLimit, ProviderQuota } from "../../Errors/ApiErrors.js"
import { Credentials } from "../Auth/Credentials.js"
import { StaleCredential } from "../Auth/CredentialsRepo.js"
import { makeGroupCommit } from "../GroupCommit/GroupCommit.js"
import { sentTogether } from "../GroupCommit/SentTogether.js"
import {
  type Hold,
  type HoldError,
  type HoldTogetherRequest,
  Ledger,
  type SettleError,
  type Settlement
} from "../Ledger/Ledger.js"
import { Providers } from "../Providers/Providers.js"
import { type QuotaRequest, Quotas } from "../Quotas/Quotas.js"
import { type CallFinish, GatewayRepo, type NewCall } from "./GatewayRepo.js"

/**
 * How long a gateway call's hold may stay unsettled before the sweeper takes it for left
 * behind: twice the provider timeout plus 5 s (125 s at the 60 s timeout), well past the
 * moment a running call settles.
 */
export const callHoldTtlMs = (providerTimeoutMs: number) => 2 * providerTimeoutMs + 5_000

/** A live call about to be made: its agent, its counts, its price and its pending row. */
export interface CallToHold {
  readonly agent: AuthenticatedAgent
  readonly quota: QuotaRequest
  readonly price: bigint
  /** The pending row, without its hold (the hold is made in the batch). */
  readonly call: NewCall
}

export type CallHoldRefusal = StaleCredential | ProviderQuota | AupLimit | HoldError

/** A live call's settlement: what it charges and how its row ends. */
export interface CallToSettle {
  readonly callId: CallId
  readonly holdId: HoldId
  readonly captured: bigint
  readonly finish: CallFinish
}

/** A batch written at once met a refusal: it is rolled back and written step by step. */
class SomeRefused extends Data.TaggedError("SomeRefused") {}

/**
 * At most this many calls go in one batch, one batch written at a time (per queue: holds and
 * settlements each have their own): what arrives meanwhile makes the next batch bigger, and
 * bigger batches cost less a call (docs/decisions.md, group commit).
 */
const MAX_BATCH = 64
const WORKERS = 1

/**
 * The writes of live gateway calls, in batches (GroupCommit.ts): the holds of the calls that
 * arrive together go to PostgreSQL in one transaction, and so do their settlements. Each
 * capability runs its own statement for the whole batch, in the order of the locks they
 * take:
 *
 * - a hold: cached credentials checked again (Credentials), the daily counts (Quotas), the
 *   credits (Ledger), a refused hold's counts given back (Quotas), the pending rows
 *   (GatewayRepo);
 * - a settlement: the holds captured or released, with the events that causes (Ledger),
 *   the rows finished (GatewayRepo).
 *
 * A call refused at one step goes no further, and nothing of it is kept.
 */
export class CallBatches extends Effect.Service<CallBatches>()("Gateway/CallBatches", {
  dependencies: [GatewayRepo.Default, Quotas.Default, Credentials.Default, Providers.Default],
  scoped: Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const repo = yield* GatewayRepo
    const quotas = yield* Quotas
    const ledger = yield* Ledger
    const credentials = yield* Credentials
    const providers = yield* Providers
    const holdTtlMs = callHoldTtlMs(providers.timeoutMs)

    const holdRequest = ({ agent, call, price }: CallToHold, ids?: ReadonlyArray<HoldId>): HoldTogetherRequest => ({
      orgId: agent.org_id,
      agentId: agent.id,
      amount: price,
      purpose: "gateway_call",
      references: [call.id],
      ids,
      testMode: false,
      ttlMs: holdTtlMs
    })

    /**
     * The usual case, every step sent at once: the statements go out together on the
     * transaction's connection (`sentTogether`), one round trip instead of
     * one a step. It commits only when nothing was refused; otherwise it rolls back and the
     * batch is written step by step, so what commits is always what the steps in order give.
     */
    const holdAllAtOnce = (calls: ReadonlyArray<CallToHold>) =>
      sql.withTransaction(Effect.gen(function*() {
        const holdIds = calls.map(() => HoldId.make(randomUUID()))
        const [valid, counted, held] = yield* sentTogether([
          credentials.stillValid(calls.map((call) => call.agent)),
          quotas.count(calls.map((call) => call.quota)),
          ledger.holdTogether(calls.map((call, i) => holdRequest(call, [holdIds[i]!]))),
          repo.insertCalls(calls.map((call, i) => ({ ...call.call, hold_id: holdIds[i]! })))
        ])
        if (!valid.every(Boolean) || counted.some(Either.isLeft) || held.some(Either.isLeft)) {
          return yield* new SomeRefused()
        }
        return held.map((answer) => Either.map(answer, (holds) => holds[0]!))
      }))

    /** Step by step, each step only for the calls the steps before let through. */
    const holdStepByStep = (calls: ReadonlyArray<CallToHold>) =>
      sql.withTransaction(Effect.gen(function*() {
        const answers: Array<Either.Either<Hold, CallHoldRefusal> | undefined> = calls.map(() => undefined)
        const refuse = (i: number, error: CallHoldRefusal) => (answers[i] = Either.left(error))

        const valid = yield* credentials.stillValid(calls.map((call) => call.agent))
        valid.forEach((ok, i) => ok || refuse(i, new StaleCredential()))

        const fresh = calls.flatMap((_, i) => answers[i] === undefined ? [i] : [])
        const counted = yield* quotas.count(fresh.map((i) => calls[i]!.quota))
        counted.forEach((count, k) => Either.isLeft(count) && refuse(fresh[k]!, count.left))

        const toHold = fresh.filter((i) => answers[i] === undefined)
        const held = yield* ledger.holdTogether(toHold.map((i) => holdRequest(calls[i]!)))
        const refused = toHold.filter((_, k) => Either.isLeft(held[k]!))
        yield* quotas.giveBack(refused.map((i) => calls[i]!.quota))
        held.forEach((answer, k) => (answers[toHold[k]!] = Either.map(answer, (holds) => holds[0]!)))

        yield* repo.insertCalls(toHold.flatMap((i, k) => {
          const answer = held[k]!
          return Either.isRight(answer) ? [{ ...calls[i]!.call, hold_id: answer.right[0]!.id }] : []
        }))
        return answers.map((answer) => answer!)
      }))

    const holdBatch = (calls: ReadonlyArray<CallToHold>) =>
      holdAllAtOnce(calls).pipe(
        Effect.catchTag("SomeRefused", () => holdStepByStep(calls)),
        Effect.orDie
      )

    /** The usual case at once (as `holdAllAtOnce`): every hold settled and every row finished. */
    const settleAllAtOnce = (calls: ReadonlyArray<CallToSettle>) =>
      sql.withTransaction(Effect.gen(function*() {
        const [settled] = yield* sentTogether([
          ledger.settleTogether(calls.map((call) => ({ holdId: call.holdId, captured: call.captured }))),
          repo.finishCalls(calls.map((call) => call.finish))
        ])
        if (settled.some(Either.isLeft)) return yield* new SomeRefused()
        return settled
      }))

    /** Step by step: only the rows of the holds that settled are finished. */
    const settleStepByStep = (calls: ReadonlyArray<CallToSettle>) =>
      sql.withTransaction(Effect.gen(function*() {
        const settled = yield* ledger.settleTogether(
          calls.map((call) => ({ holdId: call.holdId, captured: call.captured }))
        )
        yield* repo.finishCalls(calls.flatMap((call, i) => Either.isRight(settled[i]!) ? [call.finish] : []))
        return settled
      }))

    const settleBatch = (calls: ReadonlyArray<CallToSettle>) =>
      settleAllAtOnce(calls).pipe(
        Effect.catchTag("SomeRefused", () => settleStepByStep(calls)),
        Effect.orDie
      )

    const hold: (call: CallToHold) => Effect.Effect<Either.Either<Hold, CallHoldRefusal>> = yield* makeGroupCommit({
      maxBatch: MAX_BATCH,
      workers: WORKERS,
      write: holdBatch
    })
    const settle: (call: CallToSettle) => Effect.Effect<Either.Either<Settlement, SettleError>> =
      yield* makeGroupCommit({ maxBatch: MAX_BATCH, workers: WORKERS, write: settleBatch })

    return {
      /** Holds a live call's price and writes its pending row, in the next batch. */
      hold: (call: CallToHold) => Effect.flatMap(hold(call), (answer) => answer),
      /** Settles a live call's hold and finishes its row, in the next batch. */
      settle: (call: CallToSettle) => Effect.flatMap(settle(call), (answer) => answer)
    } as const
  })
}) {}
