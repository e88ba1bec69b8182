import { SqlClient, type SqlError } from "@effect/sql"
import { Clock, Effect, Layer, Option } from "effect"
import { randomUUID } from "node:crypto"
import { HoldId, isUuid, type OrgId } from "../../Domain/Ids.js"
import type { LedgerHold } from "../../Domain/LedgerRecords.js"
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
import { directStatements } from "../DirectStatements.js"
import { Events } from "../Events/Events.js"
import { statementRows } from "../StatementRows.js"
import { BatchSettled, batchSettlementSql } from "./BatchSettlement.js"
import type { HoldGate, HoldRecord, HoldTaken } from "./HoldFence.js"
import { type Hold, type HoldRequest, Ledger, type Settlement } from "./Ledger.js"
import { makeLedgerEvents } from "./LedgerEvents.js"
import { type HoldInput, type HoldOutcome, LedgerRepo, type SettleOutcome } from "./LedgerRepo.js"
import { type HoldSettled, type SettlementGate, SettlementGateClosed, type SettlementWrite } from "./SettlementFence.js"
import { hourStartOf, monthOf } from "./Time.js"

/** The caller's writes alongside a settlement (SettlementFence.ts). */
type SettlementWrites = (settled: HoldSettled) => SettlementWrite | ReadonlyArray<SettlementWrite>

/** A hold not settled within this time is taken for left behind by a crash and released. */
export const DEFAULT_HOLD_TTL_MS = 3 * 60 * 60 * 1000

const invalidAmount = (what: string, amount: bigint) =>
  new InvalidAmount({ message: `${what} must be a positive whole number of credits (got ${amount})` })

/** The one-statement settlement refused itself because it causes an event (migration 0007). */
const isEventDueSignal = (error: { readonly _tag: string }): error is SqlError.SqlError =>
  error._tag === "SqlError" &&
  ((error as SqlError.SqlError).cause as { readonly code?: unknown } | undefined)?.code === "LE001"

/**
 * The ledger on PostgreSQL. Each operation is one transaction, or part of the caller's
 * when it runs one (a savepoint where a refusal could leave a partial write), so a
 * purchase can write its own rows atomically with it; it writes the entries, the balance
 * and the budget together, with the events it causes.
 */
export const makeLedger = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  const repo = yield* LedgerRepo
  const ledgerEvents = makeLedgerEvents(yield* Events, repo)

  const now = Clock.currentTimeMillis

  const frozen = () =>
    new CreditsFrozen({ message: "This org's credits are frozen; purchases are refused, reads still work" })
  const overBudget = (amount: bigint) =>
    new OverBudget({ message: `This purchase (${amount} credits) would take the agent past its monthly budget` })

  /** Which check refused a hold, from the flags its statement computed under its locks. */
  const refusal = (outcome: HoldOutcome, amount: bigint) => {
    if (outcome.has_balance > 0 && !outcome.not_frozen) return frozen()
    if (outcome.budget_taken === 0) return overBudget(amount)
    if (outcome.has_balance > 0 && outcome.covered && !outcome.trial_ok) {
      return new TrialLimit({
        message:
          `Until the first top-up an org may spend at most ${trialTerms.hourly_spend_limit_credits} credits an hour; retry next hour`
      })
    }
    // Not covered, or covered again by the time of the read (another purchase released
    // credits just after this one was refused).
    return new InsufficientCredits({ message: `The org's balance cannot cover ${amount} credits` })
  }

  /** The rows holds write, from the request, one per reference, and the time they are made. */
  const holdInput = (
    request: Omit<HoldRequest, "testMode" | "reference">,
    references: ReadonlyArray<string>,
    ms: number,
    ids?: ReadonlyArray<HoldId>
  ): Omit<HoldInput, "holds"> & {
    readonly holds: ReadonlyArray<{ readonly id: HoldId; readonly reference: string }>
  } => ({
    holds: references.map((reference, i) => ({ id: ids?.[i] ?? HoldId.make(randomUUID()), reference })),
    orgId: request.orgId,
    agentId: request.agentId,
    amount: request.amount,
    purpose: request.purpose,
    budgetApproved: request.budgetApproved === true,
    month: monthOf(ms),
    hourStart: hourStartOf(ms),
    trialLimit: trialTerms.hourly_spend_limit_credits,
    createdAt: new Date(ms),
    expiresAt: new Date(ms + (request.ttlMs ?? DEFAULT_HOLD_TTL_MS))
  })

  const heldFor = (request: Omit<HoldRequest, "testMode" | "reference">, id: HoldId, testMode: boolean): Hold => ({
    id,
    orgId: request.orgId,
    agentId: request.agentId,
    amount: request.amount,
    testMode
  })

  /** Live holds the balance or budget refused: their budget-only rows are released at once. */
  const refuseLive = (input: HoldInput, outcome: HoldOutcome) =>
    Effect.zipRight(
      outcome.budget_taken > 0 ? repo.releaseRefused(input.holds.map((held) => held.id), input.createdAt) : Effect.void,
      Effect.fail(refusal(outcome, input.amount * BigInt(input.holds.length)))
    )

  /**
   * One statement for all the holds, atomic on its own or inside the caller's transaction
   * (so a purchase can write its own rows with it). When the balance refuses after the
   * budget took the amount, the `refused` holds the statement wrote are released at once
   * (the sweeper releases them if a crash comes between).
   */
  const holdMany = (request: Omit<HoldRequest, "reference">, references: ReadonlyArray<string>) =>
    references.length === 0 && request.amount > 0n
      ? Effect.succeed<ReadonlyArray<Hold>>([])
      : holdManyWith<never>(request, { references }, undefined, () => [])

  const hold = (request: HoldRequest) => Effect.map(holdMany(request, [request.reference]), (holds) => holds[0]!)

  /**
   * `holdMany` in one statement with the caller's gate and records (HoldFence.ts), test or
   * live: a gate that refused fails with its own error (nothing was held); a hold refused
   * after the gate passed undoes the gate's counts; the records are written exactly when
   * the holds are.
   */
  const holdManyWith = <E>(
    request: Omit<HoldRequest, "reference">,
    holds: { readonly references: ReadonlyArray<string>; readonly ids?: ReadonlyArray<HoldId> | undefined },
    gate: HoldGate<E> | undefined,
    records: (taken: HoldTaken) => ReadonlyArray<HoldRecord>
  ) =>
    Effect.gen(function*() {
      if (request.amount <= 0n) return yield* invalidAmount("A hold", request.amount)
      const { ids, references } = holds
      if (references.length === 0 || (ids !== undefined && ids.length !== references.length)) {
        return yield* Effect.dieMessage("holdManyWith: at least one reference, and one id per reference")
      }
      const input = holdInput(request, references, yield* now, ids)
      const caller = { gate: gate as HoldGate<unknown> | undefined, records }
      const undo = gate === undefined ? Effect.void : gate.undo
      if (request.testMode) {
        const outcome = yield* repo.holdTest(input, caller)
        if (gate !== undefined) yield* gate.judge(outcome.gate)
        if (outcome.held === 0) {
          return yield* Effect.zipRight(undo, overBudget(request.amount * BigInt(references.length)))
        }
      } else {
        const outcome = yield* repo.holdLive(input, caller)
        if (gate !== undefined) {
          yield* gate.judge(outcome.gate)
        }
        if (outcome.held === 0) return yield* Effect.zipRight(undo, refuseLive(input, outcome))
      }
      return input.holds.map((held) => heldFor(request, held.id, request.testMode))
    })

  /** A live hold in one statement with the caller's gate and record (`holdManyWith` for one hold). */
  const holdWith = <E>(
    request: Omit<HoldRequest, "testMode">,
    gate: HoldGate<E>,
    record: (taken: HoldTaken) => HoldRecord
  ) =>
    Effect.map(
      holdManyWith({ ...request, testMode: false }, { references: [request.reference] }, gate, (taken) => [
        record(taken)
      ]),
      (holds) => holds[0]!
    )

  /** Why a settlement was refused (`gated`: the caller's gate may have been closed). */
  const settleRefusal = (holdId: string, captured: bigint, gated: boolean) =>
    Effect.gen(function*() {
      const row = isUuid(holdId) ? yield* repo.findHold(holdId) : Option.none<LedgerHold>()
      if (Option.isNone(row)) return new NotAHold({ message: `${holdId} is not a hold` })
      if (row.value.status !== "held") {
        return new AlreadySettled({ message: `Hold ${holdId} is already ${row.value.status}` })
      }
      if (gated && row.value.amount >= captured) return new SettlementGateClosed()
      return new CaptureExceedsHold({
        message: `Capture of ${captured} credits exceeds the hold of ${row.value.amount} credits`
      })
    })

  /**
   * Settles a hold (one statement), then writes the events it causes in the same
   * transaction: `captured` becomes spend, the rest goes back to balance and budget. With
   * `signalEventDue` the statement instead fails (SQLSTATE LE001) when it would cause one.
   */
  const settle = (
    holdId: string,
    captured: bigint,
    alongside: SettlementWrites | undefined,
    signalEventDue: boolean,
    gate?: SettlementGate
  ) =>
    Effect.gen(function*() {
      const at = new Date(yield* now)
      const settled = isUuid(holdId)
        ? yield* repo.settleStatement(holdId, captured, at, alongside, signalEventDue, gate)
        : Option.none<SettleOutcome>()
      if (Option.isNone(settled)) {
        return yield* Effect.flatMap(settleRefusal(holdId, captured, gate !== undefined), Effect.fail)
      }
      const held = settled.value
      const amount = held.amount
      if (held.budget_alert_due) {
        yield* ledgerEvents.budgetReached(held.org_id, {
          agentId: held.agent_id,
          agentName: held.agent_name ?? "",
          month: held.month,
          spent: held.spent ?? 0n,
          budget: held.budget ?? 0n
        })
      }
      if (held.low_alert_fired && held.balance !== null) yield* ledgerEvents.balanceLow(held.org_id, held.balance)
      return { captured, released: amount - captured } satisfies Settlement
    })

  /**
   * A settlement, atomic with its events. Inside the caller's transaction it is part of it
   * (no savepoint: a settlement that cannot be made writes nothing, so there is nothing to
   * roll back to, and a failure of the rest aborts the caller's transaction). Outside any
   * transaction it is first tried as one statement (no BEGIN or COMMIT round trips, so the
   * agent's row is locked only while the statement runs); a settlement that causes an
   * event is refused by that statement and made again in a transaction with its events.
   */
  const settleAtomically = (
    holdId: string,
    captured: bigint,
    alongside?: SettlementWrites,
    gate?: SettlementGate
  ) =>
    Effect.gen(function*() {
      const inTransaction = Effect.serviceOption(SqlClient.TransactionConnection)
      if (Option.isSome(yield* inTransaction)) return yield* settle(holdId, captured, alongside, false, gate)
      const withEvents = () => sql.withTransaction(settle(holdId, captured, alongside, false, gate))
      return yield* settle(holdId, captured, alongside, true, gate).pipe(Effect.catchIf(isEventDueSignal, withEvents))
    }).pipe(Effect.catchTag("SqlError", Effect.die))

  // Without a gate, a settlement is never refused for one.
  const capture = (holdId: string, amount: bigint) =>
    amount <= 0n
      ? Effect.fail(invalidAmount("A capture", amount))
      : settleAtomically(holdId, amount).pipe(Effect.catchTag("SettlementGateClosed", Effect.die))

  const release = (holdId: string) =>
    settleAtomically(holdId, 0n).pipe(
      // Releasing captures nothing, so it can never exceed the hold.
      Effect.catchTags({ capture_exceeds_hold: Effect.die, SettlementGateClosed: Effect.die })
    )

  const refund = (holdId: string, amount: bigint, note: string) =>
    amount <= 0n
      ? Effect.fail(invalidAmount("A refund", amount))
      : sql.withTransaction(Effect.gen(function*() {
        const ms = yield* now
        const at = new Date(ms)
        const refunded = isUuid(holdId) ? yield* repo.refundHold(holdId, amount) : Option.none<LedgerHold>()
        if (Option.isNone(refunded)) {
          const row = isUuid(holdId) ? yield* repo.findHold(holdId) : Option.none<LedgerHold>()
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
        if (!held.test_mode) yield* repo.creditBalance(held.org_id, amount, null, at)
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

  const settleWith = (holdId: string, captured: bigint, alongside: SettlementWrites, gate?: SettlementGate) =>
    captured < 0n
      ? Effect.die(new Error("settleWith: a negative capture"))
      : settleAtomically(holdId, captured, alongside, gate)

  const batchRows = statementRows(BatchSettled, yield* directStatements)

  /** Several holds of one agent in one statement (BatchSettlement.ts), with their events. */
  const settleBatch = (holds: ReadonlyArray<{ readonly holdId: HoldId; readonly captured: bigint }>) =>
    Effect.gen(function*() {
      if (holds.some((hold) => hold.captured < 0n)) return yield* Effect.dieMessage("settleMany: a negative capture")
      const at = new Date(yield* now)
      const row = yield* batchRows.single(batchSettlementSql(sql, holds, at))
      const settled = new Set(row.settled)
      for (const { holdId } of holds) {
        if (settled.has(holdId)) continue
        // Not settled here: fine when it was settled before; a hold still held was refused.
        const found = yield* repo.findHold(holdId)
        if (Option.isNone(found) || found.value.status === "held") {
          return yield* Effect.dieMessage(`settleMany: hold ${holdId} is missing, another agent's or under its capture`)
        }
      }
      for (const month of row.months) {
        if (month.budget_alert_due && row.agent_id !== null && row.org_id !== null) {
          yield* ledgerEvents.budgetReached(row.org_id, {
            agentId: row.agent_id,
            agentName: month.agent_name,
            month: month.month,
            spent: month.spent,
            budget: month.budget
          })
        }
      }
      if (row.low_alert_fired && row.balance !== null && row.org_id !== null) {
        yield* ledgerEvents.balanceLow(row.org_id, row.balance)
      }
      return settled as ReadonlySet<string>
    })

  const settleMany = (holds: ReadonlyArray<{ readonly holdId: HoldId; readonly captured: bigint }>) =>
    holds.length === 0
      ? Effect.succeed<ReadonlySet<string>>(new Set())
      : Effect.flatMap(
        Effect.serviceOption(SqlClient.TransactionConnection),
        (inTransaction) => Option.isSome(inTransaction) ? settleBatch(holds) : sql.withTransaction(settleBatch(holds))
      ).pipe(Effect.catchTags({ SqlError: Effect.die, ParseError: Effect.die, NoSuchElementException: Effect.die }))

  return Ledger.of({
    hold: (request) => hold(request),
    holdMany,
    holdWith,
    holdManyWith,
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
    settleWith,
    settleMany
  })
})

export const LedgerLive = Layer.effect(Ledger, makeLedger).pipe(Layer.provide(LedgerRepo.Default))
