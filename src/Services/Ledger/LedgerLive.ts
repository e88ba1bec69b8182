import { SqlClient } from "@effect/sql"
import { Clock, Effect, Either, Layer, Option } from "effect"
import { randomUUID } from "node:crypto"
import { HoldId, type OrgId } from "../../Domain/Ids.js"
import { trialTerms } from "../../Domain/Plans.js"
import {
  AlreadySettled,
  CaptureExceedsHold,
  CreditsFrozen,
  InsufficientCredits,
  InvalidAmount,
  NotAHold,
  OverBudget,
  TrialLimit
} from "../../Errors/ApiErrors.js"
import { Events } from "../Events/Events.js"
import {
  type Hold,
  type HoldError,
  type HoldRequest,
  type HoldTogetherRequest,
  Ledger,
  type SettleError,
  type Settlement,
  type SettlementRequest
} from "./Ledger.js"
import { makeLedgerEvents } from "./LedgerEvents.js"
import { type HoldOutcome, type HoldRequestRow, LedgerRepo } from "./LedgerRepo.js"
import { hourStartOf, monthOf } from "./Time.js"

/** A hold not settled within this time is taken for left behind by a crash and released. */
export const DEFAULT_HOLD_TTL_MS = 3 * 60 * 60 * 1000

const invalidAmount = (what: string, amount: bigint) =>
  new InvalidAmount({ message: `${what} must be a positive whole number of credits (got ${amount})` })

/**
 * The ledger on PostgreSQL. Holds and settlements are made by the ledger's functions
 * (LedgerRepo), any number in one statement; every operation is one transaction, or part of
 * the caller's when it runs one, so a purchase or a batch of gateway calls writes its own
 * rows atomically with it, and the events a settlement causes are written in it too.
 */
export const makeLedger = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  const repo = yield* LedgerRepo
  const ledgerEvents = makeLedgerEvents(yield* Events, repo)

  const now = Clock.currentTimeMillis

  /** Runs `effect` in the caller's transaction, or in one of its own. */
  const inTransaction = <A, E, R>(effect: Effect.Effect<A, E, R>) =>
    Effect.flatMap(
      Effect.serviceOption(SqlClient.TransactionConnection),
      (open) => Option.isSome(open) ? effect : sql.withTransaction(effect)
    ).pipe(Effect.catchTag("SqlError", Effect.die))

  /** The error of the check that refused a request's holds. */
  const refusal = (outcome: Exclude<HoldOutcome["outcome"], "held">, amount: bigint): HoldError => {
    switch (outcome) {
      case "credits_frozen":
        return new CreditsFrozen({ message: "This org's credits are frozen; purchases are refused, reads still work" })
      case "over_budget":
        return new OverBudget({
          message: `This purchase (${amount} credits) would take the agent past its monthly budget`
        })
      case "trial_limit":
        return new TrialLimit({
          message:
            `Until the first top-up an org may spend at most ${trialTerms.hourly_spend_limit_credits} credits an hour; retry next hour`
        })
      case "insufficient_credits":
        return new InsufficientCredits({ message: `The org's balance cannot cover ${amount} credits` })
    }
  }

  /**
   * Every request's holds in one statement, each checked on its own in order (all of a
   * request's holds or none): its holds, or why they were refused.
   */
  const holdTogether = (requests: ReadonlyArray<HoldTogetherRequest>) =>
    Effect.gen(function*() {
      if (requests.length === 0) return []
      const ms = yield* now
      const at = new Date(ms)
      const rows = requests.map((request): HoldRequestRow => ({
        org_id: request.orgId,
        agent_id: request.agentId,
        amount: request.amount,
        month: monthOf(ms),
        approved: request.budgetApproved === true,
        test: request.testMode,
        purpose: request.purpose,
        expires_at: new Date(ms + (request.ttlMs ?? DEFAULT_HOLD_TTL_MS)),
        holds: request.references.map((reference, i) => ({
          id: request.ids?.[i] ?? HoldId.make(randomUUID()),
          reference
        }))
      }))
      const valid = rows.filter((_, i) => requests[i]!.amount > 0n && requests[i]!.references.length > 0)
      const outcomes = valid.length === 0
        ? []
        : yield* repo.hold(valid, at, hourStartOf(ms), trialTerms.hourly_spend_limit_credits)
      const byRow = new Map(outcomes.map((outcome) => [valid[outcome.idx]!, outcome.outcome]))
      return rows.map((row, i): Either.Either<ReadonlyArray<Hold>, HoldError> => {
        const request = requests[i]!
        if (request.amount <= 0n) return Either.left(invalidAmount("A hold", request.amount))
        if (request.references.length === 0) return Either.right([])
        const outcome = byRow.get(row)
        if (outcome === undefined) {
          // No row for the request: its agent is unknown to the ledger.
          return Either.left(refusal("over_budget", request.amount * BigInt(row.holds.length)))
        }
        if (outcome !== "held") return Either.left(refusal(outcome, request.amount * BigInt(row.holds.length)))
        return Either.right(row.holds.map((held) => ({
          id: held.id,
          orgId: request.orgId,
          agentId: request.agentId,
          amount: request.amount,
          testMode: request.testMode
        })))
      })
    })

  const holdMany = (
    request: Omit<HoldRequest, "reference">,
    references: ReadonlyArray<string>,
    ids?: ReadonlyArray<HoldId>
  ) =>
    ids !== undefined && ids.length !== references.length
      ? Effect.dieMessage("holdMany: one id per reference")
      : Effect.flatMap(holdTogether([{ ...request, references, ids }]), (answers) => answers[0]!)

  const hold = (request: HoldRequest) => Effect.map(holdMany(request, [request.reference]), (holds) => holds[0]!)

  /** Why each settlement the statement did not make was refused: read once for all of them. */
  const settleRefusals = (refused: ReadonlyArray<SettlementRequest>) =>
    Effect.gen(function*() {
      if (refused.length === 0) return new Map<HoldId, SettleError>()
      const rows = new Map((yield* repo.findHolds(refused.map((r) => r.holdId))).map((row) => [row.id, row]))
      return new Map(refused.map(({ captured, holdId }): [HoldId, SettleError] => {
        const row = rows.get(holdId)
        if (row === undefined) return [holdId, new NotAHold({ message: `${holdId} is not a hold` })]
        if (row.status !== "held") {
          return [holdId, new AlreadySettled({ message: `Hold ${holdId} is already ${row.status}` })]
        }
        return [
          holdId,
          new CaptureExceedsHold({
            message: `Capture of ${captured} credits exceeds the hold of ${row.amount} credits`
          })
        ]
      }))
    })

  /**
   * Every settlement in one statement, with the events it causes, in one transaction: each
   * hold captured for its amount (0 releases it), or why it could not be.
   */
  const settleTogether = (settlements: ReadonlyArray<SettlementRequest>) =>
    Effect.gen(function*() {
      if (settlements.length === 0) return []
      const at = new Date(yield* now)
      const valid = settlements.filter((s) => s.captured >= 0n)
      const outcomes = valid.length === 0
        ? []
        : yield* repo.settle(valid.map((s) => ({ hold_id: s.holdId, captured: s.captured })), at)
      const settled = new Map<string, bigint>()
      for (const outcome of outcomes) {
        switch (outcome.kind) {
          case "settled":
            settled.set(outcome.hold_id, outcome.amount)
            break
          case "budget_reached":
            yield* ledgerEvents.budgetReached(outcome.org_id, {
              agentId: outcome.agent_id,
              agentName: outcome.agent_name,
              month: outcome.month,
              spent: outcome.spent,
              budget: outcome.budget
            })
            break
          case "balance_low":
            yield* ledgerEvents.balanceLow(outcome.org_id, outcome.balance)
        }
      }
      const refusals = yield* settleRefusals(valid.filter((s) => !settled.has(s.holdId)))
      return settlements.map((s): Either.Either<Settlement, SettleError> =>
        s.captured < 0n
          ? Either.left(invalidAmount("A capture", s.captured))
          : settled.has(s.holdId)
          ? Either.right({ captured: s.captured, released: settled.get(s.holdId)! - s.captured })
          : Either.left(refusals.get(s.holdId)!)
      )
    }).pipe(inTransaction)

  /** One hold settled, with what it charged and gave back. */
  const settleOne = (holdId: HoldId, captured: bigint) =>
    Effect.flatMap(settleTogether([{ holdId, captured }]), (answers) => answers[0]!)

  const capture = (holdId: HoldId, amount: bigint) =>
    amount <= 0n ? Effect.fail(invalidAmount("A capture", amount)) : settleOne(holdId, amount)

  const release = (holdId: HoldId) =>
    settleOne(holdId, 0n).pipe(
      // Releasing captures nothing, so it can never exceed the hold nor be a negative amount.
      Effect.catchTags({ capture_exceeds_hold: Effect.die, invalid_amount: Effect.die })
    )

  const refund = (holdId: HoldId, amount: bigint, note: string) =>
    amount <= 0n
      ? Effect.fail(invalidAmount("A refund", amount))
      : sql.withTransaction(Effect.gen(function*() {
        const ms = yield* now
        const at = new Date(ms)
        const refunded = yield* repo.refundHold(holdId, amount)
        if (Option.isNone(refunded)) {
          const row = yield* repo.findHold(holdId)
          if (Option.isNone(row)) return yield* new NotAHold({ message: `${holdId} is not a hold` })
          const left = row.value.captured - row.value.refunded
          return yield* new CaptureExceedsHold({
            message: `A refund of ${amount} credits exceeds the ${left} credits charged and not yet refunded`
          })
        }
        const held = refunded.value
        if (!held.test_mode) {
          yield* repo.insertEntries([{
            org_id: held.org_id,
            kind: "refund",
            amount,
            credits: amount,
            hold_id: held.id,
            agent_id: held.agent_id,
            note,
            created_at: at
          }])
        }
        // Lock order: the agent's row before the org's.
        yield* repo.unspendBudget(held.agent_id, held.month, amount)
        if (!held.test_mode) yield* repo.creditBalance(held.org_id, amount, at)
        return { refunded: amount }
      })).pipe(Effect.catchTag("SqlError", Effect.die))

  const credit = (orgId: OrgId, amount: bigint, kind: "top_up" | "adjustment", note: string) =>
    amount <= 0n
      ? Effect.fail(invalidAmount("A credit", amount))
      : sql.withTransaction(Effect.gen(function*() {
        const at = new Date(yield* now)
        yield* repo.insertEntries([
          { org_id: orgId, kind, amount, credits: amount, hold_id: null, agent_id: null, note, created_at: at }
        ])
        const balance = yield* repo.addCredits(orgId, amount, kind === "top_up", at)
        return { balance }
      })).pipe(Effect.catchTag("SqlError", Effect.die))

  const takeBack = (orgId: OrgId, amount: bigint, note: string) =>
    amount <= 0n
      ? Effect.fail(invalidAmount("Credits taken back", amount))
      : sql.withTransaction(Effect.gen(function*() {
        const at = new Date(yield* now)
        yield* repo.insertEntries([{
          org_id: orgId,
          kind: "adjustment",
          amount: -amount,
          credits: amount,
          hold_id: null,
          agent_id: null,
          note,
          created_at: at
        }])
        const balance = yield* repo.removeCredits(orgId, amount, at)
        yield* ledgerEvents.lowBalanceAfterRemoval(orgId)
        return { balance }
      })).pipe(Effect.catchTag("SqlError", Effect.die))

  const grantTrial = (orgId: OrgId) =>
    sql.withTransaction(Effect.gen(function*() {
      const ms = yield* now
      const at = new Date(ms)
      const expiresAt = new Date(ms + trialTerms.days * 86_400_000)
      const granted = yield* repo.insertTrialGrant(orgId, trialTerms.credits, at, expiresAt)
      if (!granted) return
      yield* repo.insertEntries([{
        org_id: orgId,
        kind: "trial_grant",
        amount: trialTerms.credits,
        credits: trialTerms.credits,
        hold_id: null,
        agent_id: null,
        note: `Trial credits, expire ${expiresAt.toISOString()}`,
        created_at: at
      }])
      yield* repo.addCredits(orgId, trialTerms.credits, false, at)
    })).pipe(Effect.orDie)

  const orgCredits = (orgId: string) =>
    Effect.map(repo.balanceRow(orgId), (row) =>
      Option.match(row, {
        onNone: () => ({ balance: 0n, frozen: false, funded: false }),
        onSome: (r) => ({ balance: r.balance, frozen: r.frozen, funded: r.funded })
      }))

  const agentMonthSpend = (agentId: string) => Effect.flatMap(now, (ms) => repo.monthSpend(agentId, monthOf(ms)))

  const setFrozen = (orgId: string, frozen: boolean) =>
    Effect.flatMap(now, (ms) => repo.setFrozen(orgId, frozen, new Date(ms)))

  const trialGrant = (orgId: string) =>
    Effect.map(repo.trialGrant(orgId), (row) =>
      Option.match(row, {
        onNone: () => null,
        onSome: (r) => ({
          credits: r.credits,
          grantedAt: r.granted_at,
          expiresAt: r.expires_at,
          expiredAt: r.expired_at
        })
      }))

  return Ledger.of({
    hold: (request) => hold(request),
    holdMany,
    holdTogether,
    capture,
    release,
    refund,
    credit,
    takeBack,
    grantTrial,
    orgCredits,
    agentMonthSpend,
    setFrozen,
    trialGrant,
    settleTogether
  })
})

export const LedgerLive = Layer.effect(Ledger, makeLedger).pipe(Layer.provide(LedgerRepo.Default))
