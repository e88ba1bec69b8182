import { SqlClient } from "@effect/sql"
import { Clock, Effect, Option, Schema } from "effect"
import { randomUUID } from "node:crypto"
import type { AdminUser, AuthenticatedAgent } from "../../Domain/Current.js"
import { Dispute, type DisputeOpening, type DisputeStatus } from "../../Domain/Dispute.js"
import { type AgentId, DisputeId, type OrgId } from "../../Domain/Ids.js"
import { commonLimits } from "../../Domain/Plans.js"
import {
  Conflict,
  DisputeWindowClosed,
  NotDisputable,
  NotFound,
  PlanLimit,
  ReasonRequired
} from "../../Errors/ApiErrors.js"
import { Events } from "../Events/Events.js"
import { Ledger } from "../Ledger/Ledger.js"
import { AuditLog } from "../Operations/AuditLog.js"
import { RecordSigner } from "../Receipts/RecordSigner.js"
import { DisputesRepo } from "./DisputesRepo.js"
import { ItemsRepo } from "./ItemsRepo.js"
import { purchasingRules } from "./PurchasingConfig.js"
import { ReceiptsRepo } from "./ReceiptsRepo.js"

/**
 * Disputes of charged items (passed or partial), opened by the org's agents within 7 days
 * of the purchase, at most 100 open per org and one per item. Administrators decide them
 * with a written reason: upheld refunds what the item was charged through the ledger
 * (test purchases give the agent's budget back; live ones the org's credits), rejected
 * refunds nothing. Either way `dispute.decided` is emitted with `refunded_credits`.
 */
const wireOf = Schema.encode(Dispute.json)

export class Disputes extends Effect.Service<Disputes>()("Purchasing/Disputes", {
  dependencies: [ItemsRepo.Default, ReceiptsRepo.Default, DisputesRepo.Default, AuditLog.Default, RecordSigner.Default],
  effect: Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const itemRows = yield* ItemsRepo
    const receiptRows = yield* ReceiptsRepo
    const rows = yield* DisputesRepo
    const ledger = yield* Ledger
    const audit = yield* AuditLog
    const events = yield* Events
    const signer = yield* RecordSigner
    /**
     * The dispute with its signature, over the record as the wire shows it (the HttpApi encodes
     * the same). Signed after any transaction: a key made by the first signature must not roll
     * back with it.
     */
    const signed = (dispute: Dispute) =>
      wireOf(dispute).pipe(
        Effect.orDie,
        Effect.flatMap(signer.signed),
        Effect.map(({ signature }) => ({ ...dispute, signature }))
      )

    const notFound = new NotFound({ message: "No dispute with that id" })

    /** Opens a dispute in `orgId`; `openedBy` is the agent that opened it, else the receipt's buyer. */
    const openIn = (orgId: OrgId, openedBy: AgentId | null, request: DisputeOpening) =>
      sql.withTransaction(Effect.gen(function*() {
        yield* rows.lockOrgOpeners(orgId)
        const receipt = yield* receiptRows.receiptBuyer(orgId, request.receipt_id)
        if (Option.isNone(receipt)) return yield* new NotFound({ message: "No receipt with that id in this org" })
        const item = yield* itemRows.itemAt(receipt.value.id, request.item_index)
        if (Option.isNone(item)) {
          return yield* new NotFound({ message: `The receipt has no item ${request.item_index}` })
        }
        const now = yield* Clock.currentTimeMillis
        const closesAt = receipt.value.created_at.getTime() + purchasingRules.disputeWindowMs
        if (now > closesAt) {
          return yield* new DisputeWindowClosed({
            message: `Disputes must be opened within 7 days of the purchase; this one closed at ${
              new Date(closesAt).toISOString()
            }`
          })
        }
        if (item.value.status !== "passed" && item.value.status !== "partial") {
          return yield* new NotDisputable({
            message:
              `Item ${request.item_index} was not charged (${item.value.status}); only passed or partial items can be disputed`
          })
        }
        const existing = yield* rows.forItem(item.value.id)
        if (Option.isSome(existing)) {
          return yield* new Conflict({ message: `Item ${request.item_index} is already disputed (${existing.value})` })
        }
        if ((yield* rows.openCount(orgId)) >= commonLimits.open_disputes_per_org) {
          // The spec gives this limit no code; plan_limit is its code for the same kind of
          // per-org count (webhook endpoints), see docs/decisions.md.
          return yield* new PlanLimit({
            message:
              `An org may have at most ${commonLimits.open_disputes_per_org} open disputes at once, whatever its plan; another can be opened once one of them is decided`
          })
        }
        const id = DisputeId.make(randomUUID())
        yield* rows.insert({
          id,
          org_id: orgId,
          agent_id: openedBy ?? receipt.value.agent_id,
          receipt_id: receipt.value.id,
          item_id: item.value.id,
          item_index: request.item_index,
          status: "open",
          reason: request.reason ?? null,
          created_at: new Date(now)
        })
        return Option.getOrThrow(yield* rows.byId(id, false))
      })).pipe(Effect.catchTag("SqlError", Effect.die), Effect.flatMap(signed))

    /** An agent disputes an item of one of its org's receipts. */
    const open = (agent: AuthenticatedAgent, request: DisputeOpening) => openIn(agent.org_id, agent.id, request)

    /** A member (session or write org key) disputes an item of one of the org's receipts. */
    const openForOrg = (orgId: OrgId, request: DisputeOpening) => openIn(orgId, null, request)

    const get = (orgId: OrgId, id: DisputeId) =>
      Effect.flatMap(
        rows.byId(id, false),
        (row) => Option.isSome(row) && row.value.org_id === orgId ? signed(row.value) : Effect.fail(notFound)
      )

    /** Administrators: disputes across orgs, oldest first; with `orgId`, one org's (members). */
    const list = (options: {
      readonly orgId?: OrgId | undefined
      readonly status?: DisputeStatus | undefined
      readonly limit: number
      readonly startingAfter?: DisputeId | undefined
    }) =>
      Effect.gen(function*() {
        let after: Dispute | null = null
        if (options.startingAfter !== undefined) {
          const cursor = yield* rows.byId(options.startingAfter, false)
          if (Option.isNone(cursor) || (options.orgId !== undefined && cursor.value.org_id !== options.orgId)) {
            return yield* new NotFound({ message: "starting_after names no dispute" })
          }
          after = cursor.value
        }
        const page = yield* rows.list(options.orgId ?? null, options.status ?? null, after, options.limit + 1)
        const disputes = yield* Effect.forEach(page.slice(0, options.limit), signed)
        return { disputes, has_more: page.length > options.limit }
      })

    const decide = (admin: AdminUser, id: DisputeId, decision: "upheld" | "rejected", reason: string | undefined) =>
      Effect.gen(function*() {
        const note = reason?.trim() ?? ""
        if (note.length === 0) {
          return yield* new ReasonRequired({ message: "Deciding a dispute needs a written `reason`" })
        }
        return yield* sql.withTransaction(Effect.gen(function*() {
          const found = yield* rows.byId(id, true)
          if (Option.isNone(found)) return yield* notFound
          const row = found.value
          if (row.status !== "open") return yield* new Conflict({ message: `This dispute was already ${row.status}` })
          const now = new Date(yield* Clock.currentTimeMillis)
          let refunded = 0n
          if (decision === "upheld" && row.item_cost > 0n && row.hold_id !== null) {
            const result = yield* ledger.refund(row.hold_id, row.item_cost, `Dispute ${row.id} upheld: ${note}`)
            refunded = result.refunded
            yield* itemRows.markRefunded(row.item_id, refunded)
          }
          yield* rows.recordDecision({
            id: row.id,
            status: decision,
            note,
            refunded,
            decidedBy: admin.admin_id,
            at: now
          })
          yield* events.emit(row.org_id, {
            type: "dispute.decided",
            data: {
              dispute_id: row.id,
              receipt_id: row.receipt_id,
              item_index: row.item_index,
              decision,
              refunded_credits: refunded.toString(),
              note
            }
          })
          const decided = Option.getOrThrow(yield* rows.byId(row.id, false))
          yield* audit.record({ admin_id: admin.admin_id, email: admin.email }, {
            action: "dispute.decide",
            target_type: "dispute",
            target_id: row.id,
            reason: note,
            before: { status: row.status },
            after: { status: decision, refunded_credits: refunded }
          })
          return decided
        })).pipe(
          Effect.catchTags({
            SqlError: Effect.die,
            invalid_amount: Effect.die,
            not_a_hold: Effect.die,
            capture_exceeds_hold: Effect.die
          }),
          Effect.flatMap(signed)
        )
      })

    return { open, openForOrg, get, list, decide } as const
  })
}) {}
