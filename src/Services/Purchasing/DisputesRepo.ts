import { SqlClient, SqlSchema } from "@effect/sql"
import { Effect, Option, Schema } from "effect"
import { AgentId, DisputeId, HoldId, OrgId, ReceiptId } from "../../Domain/Ids.js"

/** Disputes of charged receipt items, each with its item's cost and hold; rows decoded. */
export const DisputeStatus = Schema.Literal("open", "upheld", "rejected")

export const DisputeRow = Schema.Struct({
  id: DisputeId,
  org_id: OrgId,
  agent_id: AgentId,
  receipt_id: ReceiptId,
  item_id: Schema.String,
  item_index: Schema.Number,
  reason: Schema.NullOr(Schema.String),
  status: DisputeStatus,
  note: Schema.NullOr(Schema.String),
  refunded_credits: Schema.BigInt,
  decided_by: Schema.NullOr(Schema.String),
  created_at: Schema.DateFromSelf,
  decided_at: Schema.NullOr(Schema.DateFromSelf),
  item_cost: Schema.BigInt,
  hold_id: Schema.NullOr(HoldId)
})
export type DisputeRow = typeof DisputeRow.Type

export interface NewDispute {
  readonly id: string
  readonly org_id: string
  readonly agent_id: string
  readonly receipt_id: string
  readonly item_id: string
  readonly item_index: number
  readonly reason: string | null
  readonly created_at: Date
}

export class DisputesRepo extends Effect.Service<DisputesRepo>()("Purchasing/DisputesRepo", {
  effect: Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const select = sql`SELECT d.*, i.cost_credits AS item_cost, i.hold_id
      FROM disputes d JOIN receipt_items i ON i.id = d.item_id`

    const findById = SqlSchema.findOne({
      Request: Schema.Struct({ id: Schema.String, lock: Schema.Boolean }),
      Result: DisputeRow,
      execute: ({ id, lock }) =>
        lock ? sql`${select} WHERE d.id = ${id} FOR UPDATE OF d` : sql`${select} WHERE d.id = ${id}`
    })
    /** A dispute by id (the caller checks the id is a UUID); `lock` for deciding it. */
    const byId = (id: DisputeId, lock: boolean) => findById({ id, lock }).pipe(Effect.orDie)

    /** One opener at a time per org, so the limit of open disputes holds under concurrency. */
    const lockOrgOpeners = (orgId: string) =>
      sql`SELECT pg_advisory_xact_lock(hashtext(${`disputes:${orgId}`}))`.pipe(Effect.asVoid, Effect.orDie)

    const findForItem = SqlSchema.findOne({
      Request: Schema.String,
      Result: Schema.Struct({ id: Schema.String }),
      execute: (itemId) => sql`SELECT id FROM disputes WHERE item_id = ${itemId}`
    })
    const forItem = (itemId: string) => findForItem(itemId).pipe(Effect.map(Option.map((row) => row.id)), Effect.orDie)

    const countOpen = SqlSchema.single({
      Request: Schema.String,
      Result: Schema.Struct({ open: Schema.Number }),
      execute: (orgId) => sql`SELECT count(*)::int AS open FROM disputes WHERE org_id = ${orgId} AND status = 'open'`
    })
    const openCount = (orgId: string) => countOpen(orgId).pipe(Effect.map((row) => row.open), Effect.orDie)

    const insert = (row: NewDispute) =>
      sql`INSERT INTO disputes ${sql.insert({ ...row, status: "open" })}`.pipe(Effect.asVoid, Effect.orDie)

    const listPage = SqlSchema.findAll({
      Request: Schema.Struct({
        orgId: Schema.NullOr(Schema.String),
        status: Schema.NullOr(DisputeStatus),
        after: Schema.NullOr(Schema.Struct({ created_at: Schema.DateFromSelf, id: Schema.String })),
        limit: Schema.Number
      }),
      Result: DisputeRow,
      execute: ({ after, limit, orgId, status }) =>
        sql`${select}
          WHERE ${status === null ? sql`true` : sql`d.status = ${status}`}
            AND ${orgId === null ? sql`true` : sql`d.org_id = ${orgId}`}
            AND ${after === null ? sql`true` : sql`(d.created_at, d.id) > (${after.created_at}, ${after.id})`}
          ORDER BY d.created_at, d.id LIMIT ${limit}`
    })
    /** Oldest first, across orgs or in one, after the dispute `after` when given. */
    const list = (
      orgId: string | null,
      status: typeof DisputeStatus.Type | null,
      after: { readonly created_at: Date; readonly id: string } | null,
      limit: number
    ) => listPage({ orgId, status, after, limit }).pipe(Effect.orDie)

    const recordDecision = (decision: {
      readonly id: string
      readonly status: "upheld" | "rejected"
      readonly note: string
      readonly refunded: bigint
      readonly decidedBy: string
      readonly at: Date
    }) =>
      sql`
        UPDATE disputes SET status = ${decision.status}, note = ${decision.note},
          refunded_credits = ${decision.refunded.toString()}, decided_by = ${decision.decidedBy},
          decided_at = ${decision.at}
        WHERE id = ${decision.id}`.pipe(Effect.asVoid, Effect.orDie)

    return { byId, lockOrgOpeners, forItem, openCount, insert, list, recordDecision } as const
  })
}) {}
