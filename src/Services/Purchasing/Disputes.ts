import { SqlClient } from "@effect/sql"
import { Clock, Effect, Option } from "effect"
import { randomUUID } from "node:crypto"
import { isUuid } from "../../Domain/Ids.js"
import { amountOf } from "../../Domain/Money.js"
import { commonLimits } from "../../Domain/Plans.js"
import type { Dispute } from "../../Domain/Purchasing.js"
import { isoOrNull } from "../../Domain/Timestamps.js"
import {
  Conflict,
  DisputeWindowClosed,
  NotDisputable,
  NotFound,
  PlanLimit,
  ReasonRequired
} from "../../Errors/ApiErrors.js"
import type { AdminUser, AuthenticatedAgent } from "../Auth/Current.js"
import { Events } from "../Events/Events.js"
import { Ledger } from "../Ledger/Ledger.js"
import { ItemsRepo } from "./ItemsRepo.js"
import { purchasingRules } from "./PurchasingConfig.js"

/**
 * Disputes of charged items (passed or partial), opened by the org's agents within 7 days
 * of the purchase, at most 100 open per org and one per item. Administrators decide them
 * with a written reason: upheld refunds what the item was charged through the ledger
 * (test purchases give the agent's budget back; live ones the org's credits), rejected
 * refunds nothing. Either way `dispute.decided` is emitted with `refunded_credits`.
 */
interface DisputeRow {
  readonly id: string
  readonly org_id: string
  readonly agent_id: string
  readonly receipt_id: string
  readonly item_id: string
  readonly item_index: number
  readonly reason: string | null
  readonly status: "open" | "upheld" | "rejected"
  readonly note: string | null
  readonly refunded_credits: string
  readonly decided_by: string | null
  readonly created_at: Date
  readonly decided_at: Date | null
  readonly item_cost: string
  readonly hold_id: string | null
}

const view = (row: DisputeRow): Dispute => ({
  id: row.id,
  receipt_id: row.receipt_id,
  item_index: row.item_index,
  agent_id: row.agent_id,
  status: row.status,
  decision: row.status === "open" ? null : row.status,
  reason: row.reason,
  note: row.note,
  item_cost: amountOf(BigInt(row.item_cost)),
  refund: amountOf(BigInt(row.refunded_credits)),
  created_at: row.created_at.toISOString(),
  decided_at: isoOrNull(row.decided_at)
})

export class Disputes extends Effect.Service<Disputes>()("Purchasing/Disputes", {
  dependencies: [ItemsRepo.Default],
  effect: Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const itemRows = yield* ItemsRepo
    const ledger = yield* Ledger
    const events = yield* Events

    const columns = sql.unsafe(`d.*, i.cost_credits AS item_cost, i.hold_id`)
    const notFound = new NotFound({ message: "No dispute with that id" })

    const byId = (id: string, lock: boolean) =>
      (!isUuid(id)
        ? Effect.succeed([] as ReadonlyArray<DisputeRow>)
        : lock
        ? sql<
          DisputeRow
        >`SELECT ${columns} FROM disputes d JOIN receipt_items i ON i.id = d.item_id WHERE d.id = ${id} FOR UPDATE OF d`
        : sql<
          DisputeRow
        >`SELECT ${columns} FROM disputes d JOIN receipt_items i ON i.id = d.item_id WHERE d.id = ${id}`)
        .pipe(Effect.map((rows) => Option.fromNullable(rows[0])), Effect.orDie)

    const open = (agent: AuthenticatedAgent, request: {
      readonly receipt_id: string
      readonly item_index: number
      readonly reason?: string | undefined
    }) =>
      sql.withTransaction(Effect.gen(function*() {
        // One opener at a time per org, so the limit of open disputes holds under concurrency.
        yield* sql`SELECT pg_advisory_xact_lock(hashtext(${`disputes:${agent.org_id}`}))`.pipe(Effect.orDie)
        const receipt = isUuid(request.receipt_id)
          ? yield* sql<{ id: string; created_at: Date }>`
              SELECT id, created_at FROM receipts WHERE id = ${request.receipt_id} AND org_id = ${agent.org_id}`
            .pipe(Effect.map((rows) => Option.fromNullable(rows[0])), Effect.orDie)
          : Option.none<{ id: string; created_at: Date }>()
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
        const existing = yield* sql<{ id: string }>`SELECT id FROM disputes WHERE item_id = ${item.value.id}`.pipe(
          Effect.orDie
        )
        if (existing[0] !== undefined) {
          return yield* new Conflict({ message: `Item ${request.item_index} is already disputed (${existing[0].id})` })
        }
        const [{ open: openCount }] = (yield* sql<{ open: number }>`
          SELECT count(*)::int AS open FROM disputes WHERE org_id = ${agent.org_id} AND status = 'open'`.pipe(
          Effect.orDie
        )) as unknown as [{ open: number }]
        if (openCount >= commonLimits.open_disputes_per_org) {
          return yield* new PlanLimit({
            message: `An org may have at most ${commonLimits.open_disputes_per_org} open disputes at once`
          })
        }
        const id = randomUUID()
        yield* sql`
          INSERT INTO disputes ${
          sql.insert({
            id,
            org_id: agent.org_id,
            agent_id: agent.id,
            receipt_id: receipt.value.id,
            item_id: item.value.id,
            item_index: request.item_index,
            reason: request.reason ?? null,
            status: "open",
            created_at: new Date(now)
          })
        }`.pipe(Effect.orDie)
        return view(Option.getOrThrow(yield* byId(id, false)))
      })).pipe(Effect.catchTag("SqlError", Effect.die))

    const get = (orgId: string, id: string) =>
      Effect.flatMap(
        byId(id, false),
        (row) =>
          Option.isSome(row) && row.value.org_id === orgId ? Effect.succeed(view(row.value)) : Effect.fail(notFound)
      )

    /** Administrators: disputes across orgs, oldest open first by default. */
    const list = (options: {
      readonly status?: "open" | "upheld" | "rejected" | undefined
      readonly limit: number
      readonly startingAfter?: string | undefined
    }) =>
      Effect.gen(function*() {
        let after = sql`true`
        if (options.startingAfter !== undefined) {
          const cursor = yield* byId(options.startingAfter, false)
          if (Option.isNone(cursor)) return yield* new NotFound({ message: "starting_after names no dispute" })
          after = sql`(d.created_at, d.id) > (${cursor.value.created_at}, ${cursor.value.id})`
        }
        const status = options.status === undefined ? sql`true` : sql`d.status = ${options.status}`
        const rows = yield* sql<DisputeRow>`
          SELECT ${columns} FROM disputes d JOIN receipt_items i ON i.id = d.item_id
          WHERE ${status} AND ${after} ORDER BY d.created_at, d.id LIMIT ${options.limit + 1}`.pipe(Effect.orDie)
        return { disputes: rows.slice(0, options.limit).map(view), has_more: rows.length > options.limit }
      })

    const decide = (admin: AdminUser, id: string, decision: "upheld" | "rejected", reason: string | undefined) =>
      Effect.gen(function*() {
        const note = reason?.trim() ?? ""
        if (note.length === 0) {
          return yield* new ReasonRequired({ message: "Deciding a dispute needs a written `reason`" })
        }
        return yield* sql.withTransaction(Effect.gen(function*() {
          const found = yield* byId(id, true)
          if (Option.isNone(found)) return yield* notFound
          const row = found.value
          if (row.status !== "open") return yield* new Conflict({ message: `This dispute was already ${row.status}` })
          const now = new Date(yield* Clock.currentTimeMillis)
          let refunded = 0n
          if (decision === "upheld") {
            const cost = BigInt(row.item_cost)
            if (cost > 0n && row.hold_id !== null) {
              const result = yield* ledger.refund(row.hold_id, cost, `Dispute ${row.id} upheld: ${note}`)
              refunded = result.refunded
              yield* itemRows.markRefunded(row.item_id, refunded)
            }
          }
          yield* sql`
            UPDATE disputes SET status = ${decision}, note = ${note}, refunded_credits = ${refunded.toString()},
              decided_by = ${admin.admin_id}, decided_at = ${now}
            WHERE id = ${row.id}`.pipe(Effect.orDie)
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
          return view(Option.getOrThrow(yield* byId(row.id, false)))
        })).pipe(
          Effect.catchTags({
            SqlError: Effect.die,
            invalid_amount: Effect.die,
            not_a_hold: Effect.die,
            capture_exceeds_hold: Effect.die
          })
        )
      })

    return { open, get, list, decide } as const
  })
}) {}
