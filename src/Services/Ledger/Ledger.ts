import { Context, type Effect, type Either } from "effect"
import type { AgentId, HoldId, OrgId } from "../../Domain/Ids.js"
import type {
  AlreadySettled,
  CaptureExceedsHold,
  CreditsFrozen,
  InsufficientCredits,
  InvalidAmount,
  NotAHold,
  OverBudget,
  TrialLimit
} from "../../Errors/ApiErrors.js"

/**
 * The credit ledger: the contract every purchase path uses. Amounts are whole credits.
 *
 * A hold reserves credits (and the agent's monthly budget) before work that may cost
 * money; it is then captured (possibly for less; the rest is released) or released, once.
 * Every change is an append-only entry written in the same transaction as the balance
 * row, so the sum of an org's entries always equals its balance.
 *
 * Test agents (`testMode`) rehearse every check but the balance: their holds and captures
 * count toward the agent's monthly budget and never move org credits.
 */
export interface HoldRequest {
  readonly orgId: OrgId
  readonly agentId: AgentId
  readonly amount: bigint
  /** What the hold pays for, e.g. "gateway_call" or "purchase_item". */
  readonly purpose: string
  /** The call or item the hold belongs to (unique per hold). */
  readonly reference: string
  readonly testMode: boolean
  /** An owner approved going past the monthly budget for this purchase. */
  readonly budgetApproved?: boolean | undefined
  /**
   * How long the hold may stay unsettled before the sweeper releases it as left behind by
   * a crash (default 3 hours, which outlives a job's 2-hour run time).
   */
  readonly ttlMs?: number | undefined
}

/** One request of `holdTogether`: one hold per reference (with its id when given), all or none. */
export interface HoldTogetherRequest extends Omit<HoldRequest, "reference"> {
  readonly references: ReadonlyArray<string>
  readonly ids?: ReadonlyArray<HoldId> | undefined
}

/** A hold to settle: `captured` credits charged (0 releases it), the rest given back. */
export interface SettlementRequest {
  readonly holdId: HoldId
  readonly captured: bigint
}

export interface Hold {
  readonly id: HoldId
  readonly orgId: OrgId
  readonly agentId: AgentId
  readonly amount: bigint
  readonly testMode: boolean
}

export interface Settlement {
  readonly captured: bigint
  readonly released: bigint
}

export interface OrgCredits {
  readonly balance: bigint
  readonly frozen: boolean
  readonly funded: boolean
}

/** An org's trial grant, when it has one. */
export interface TrialGrant {
  readonly credits: bigint
  readonly grantedAt: Date
  readonly expiresAt: Date
  /** Set once the unspent trial credits have been taken back. */
  readonly expiredAt: Date | null
}

export type HoldError = InvalidAmount | InsufficientCredits | OverBudget | CreditsFrozen | TrialLimit
export type SettleError = InvalidAmount | CaptureExceedsHold | NotAHold | AlreadySettled

export class Ledger extends Context.Tag("Ledger/Ledger")<Ledger, {
  /** Reserves `amount` atomically against balance, budget, freeze and trial limits. */
  readonly hold: (request: HoldRequest) => Effect.Effect<Hold, HoldError>
  /**
   * One hold of `amount` per reference, all or none, in one statement: the checks apply to
   * their sum (a purchase's items are held together). In `references`' order.
   */
  readonly holdMany: (
    request: Omit<HoldRequest, "reference">,
    references: ReadonlyArray<string>,
    ids?: ReadonlyArray<HoldId>
  ) => Effect.Effect<ReadonlyArray<Hold>, HoldError>
  /**
   * Several requests' holds in one statement (a batch of gateway calls), each request with
   * its own checks, applied in the given order as one by one would: a request sees what the
   * requests before it took. In the caller's transaction when there is one (the caller's own
   * statements then commit with it). Answers each request's holds or its refusal, in order.
   */
  readonly holdTogether: (
    requests: ReadonlyArray<HoldTogetherRequest>
  ) => Effect.Effect<ReadonlyArray<Either.Either<ReadonlyArray<Hold>, HoldError>>>
  /** Charges `amount` (at most the hold) and releases the rest; a hold settles once. */
  readonly capture: (holdId: HoldId, amount: bigint) => Effect.Effect<Settlement, SettleError>
  /** Returns a hold's credits and budget untouched. */
  readonly release: (holdId: HoldId) => Effect.Effect<Settlement, NotAHold | AlreadySettled>
  /** Gives back up to the captured amount of a settled hold (an upheld dispute). */
  readonly refund: (
    holdId: HoldId,
    amount: bigint,
    note: string
  ) => Effect.Effect<{ readonly refunded: bigint }, InvalidAmount | NotAHold | CaptureExceedsHold>
  /** Adds credits to an org (a top-up or an administrator's adjustment). */
  readonly credit: (
    orgId: OrgId,
    amount: bigint,
    kind: "top_up" | "adjustment",
    note: string
  ) => Effect.Effect<{ readonly balance: bigint }, InvalidAmount>
  /**
   * Takes credits back from an org (a refunded or disputed payment) with an `adjustment`
   * entry of `-amount`, even past zero: the balance may go negative, and then no hold
   * succeeds until it is funded again. Raises `balance.low` as a charge would.
   */
  readonly takeBack: (
    orgId: OrgId,
    amount: bigint,
    note: string
  ) => Effect.Effect<{ readonly balance: bigint }, InvalidAmount>
  /** Grants a new org its trial credits; call inside the org-creation transaction. */
  readonly grantTrial: (orgId: OrgId) => Effect.Effect<void>
  readonly orgCredits: (orgId: OrgId) => Effect.Effect<OrgCredits>
  /** The agent's spend this calendar month (UTC): captured plus still held. */
  readonly agentMonthSpend: (agentId: AgentId) => Effect.Effect<bigint>
  /** Freezes or unfreezes an org's credits: holds answer `credits_frozen`, reads still work. */
  readonly setFrozen: (orgId: OrgId, frozen: boolean) => Effect.Effect<void>
  /** The org's trial grant, if any. */
  readonly trialGrant: (orgId: OrgId) => Effect.Effect<TrialGrant | null>
  /**
   * Settles several holds in one statement (a batch of gateway calls, a purchase's items):
   * each captured for its amount (0 releases it) when it is still held and covers it, with
   * the events the settlement causes, in one transaction (the caller's when there is one,
   * so its own writes commit with it). Answers each settlement or why it was refused, in
   * order.
   */
  readonly settleTogether: (
    settlements: ReadonlyArray<SettlementRequest>
  ) => Effect.Effect<ReadonlyArray<Either.Either<Settlement, SettleError>>>
}>() {}
