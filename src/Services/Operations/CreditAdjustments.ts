import { SqlClient } from "@effect/sql"
import { Config, Effect, Option } from "effect"
import type { OrgId } from "../../Domain/Ids.js"
import { ConfirmationRequired, InvalidAmount, NotFound, ReasonRequired } from "../../Errors/ApiErrors.js"
import { Ledger } from "../Ledger/Ledger.js"
import { OrgsRepo } from "../Orgs/OrgsRepo.js"
import { type AuditActor, AuditLog } from "./AuditLog.js"

/**
 * An administrator's changes to an org's credits: adjustments (a credit or a debit through
 * the ledger, with a written reason) and freezes (holds answer `credits_frozen`, every read
 * still works). An adjustment whose size is above ADJUSTMENT_CONFIRM_CREDITS (default
 * 1,000,000) needs `confirm_credits` equal to the amount. Each is audited in its transaction.
 */
const WHOLE = /^-?\d+$/

/** The signed whole number of credits, or null when it is not one. */
const creditsOf = (value: number | string): bigint | null => {
  if (typeof value === "number") return Number.isSafeInteger(value) ? BigInt(value) : null
  const text = value.trim()
  return WHOLE.test(text) ? BigInt(text) : null
}

export class CreditAdjustments extends Effect.Service<CreditAdjustments>()("Operations/CreditAdjustments", {
  dependencies: [AuditLog.Default, OrgsRepo.Default],
  effect: Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const ledger = yield* Ledger
    const orgs = yield* OrgsRepo
    const audit = yield* AuditLog
    const confirmAbove = BigInt(
      yield* Config.integer("ADJUSTMENT_CONFIRM_CREDITS").pipe(Config.withDefault(1_000_000))
    )

    const existingOrg = (orgId: OrgId) =>
      Effect.flatMap(
        orgs.lockOrg(orgId),
        (found) => Option.isNone(found) ? new NotFound({ message: `No org ${orgId}` }) : Effect.void
      )

    const adjust = (
      actor: AuditActor,
      orgId: OrgId,
      request: {
        readonly credits: number | string
        readonly reason?: string | undefined
        readonly confirm_credits?: number | string | undefined
      }
    ) =>
      Effect.gen(function*() {
        const credits = creditsOf(request.credits)
        if (credits === null || credits === 0n) {
          return yield* new InvalidAmount({ message: "credits must be a whole number of credits other than 0" })
        }
        const reason = request.reason?.trim() ?? ""
        if (reason.length === 0) {
          return yield* new ReasonRequired({ message: "An adjustment needs a written `reason`" })
        }
        const size = credits < 0n ? -credits : credits
        if (size > confirmAbove) {
          const confirmed = request.confirm_credits === undefined ? null : creditsOf(request.confirm_credits)
          if (confirmed !== credits) {
            return yield* new ConfirmationRequired({
              message:
                `An adjustment above ${confirmAbove} credits needs confirm_credits equal to the amount (${credits})`
            })
          }
        }
        return yield* sql.withTransaction(Effect.gen(function*() {
          yield* existingOrg(orgId)
          const before = yield* ledger.orgCredits(orgId)
          const note = `Adjustment by ${actor.email}: ${reason}`
          const { balance } = credits > 0n
            ? yield* ledger.credit(orgId, credits, "adjustment", note)
            : yield* ledger.takeBack(orgId, size, note)
          yield* audit.record(actor, {
            action: "org.adjust_credits",
            target_type: "org",
            target_id: orgId,
            reason,
            before: { balance: before.balance },
            after: { balance, credits }
          })
          return { org_id: orgId, credits, balance }
        })).pipe(Effect.catchTags({ SqlError: Effect.die, invalid_amount: Effect.die }))
      })

    const setFrozen = (actor: AuditActor, orgId: OrgId, frozen: boolean, reason: string | null) =>
      sql.withTransaction(Effect.gen(function*() {
        yield* existingOrg(orgId)
        const before = yield* ledger.orgCredits(orgId)
        yield* ledger.setFrozen(orgId, frozen)
        yield* audit.record(actor, {
          action: frozen ? "org.freeze_credits" : "org.unfreeze_credits",
          target_type: "org",
          target_id: orgId,
          reason,
          before: { credits_frozen: before.frozen },
          after: { credits_frozen: frozen }
        })
        return { org_id: orgId, credits_frozen: frozen }
      })).pipe(Effect.catchTag("SqlError", Effect.die))

    /** Holds answer `credits_frozen` until unfrozen; needs a written reason. */
    const freeze = (actor: AuditActor, orgId: OrgId, reason: string | undefined) =>
      Effect.gen(function*() {
        const why = reason?.trim() ?? ""
        if (why.length === 0) {
          return yield* new ReasonRequired({ message: "Freezing an org's credits needs a written `reason`" })
        }
        return yield* setFrozen(actor, orgId, true, why)
      })

    const unfreeze = (actor: AuditActor, orgId: OrgId, reason: string | undefined) =>
      setFrozen(actor, orgId, false, reason?.trim() || null)

    return { adjust, freeze, unfreeze } as const
  })
}) {}
