import { SqlClient, SqlSchema } from "@effect/sql"
import { Effect, Option, Schema } from "effect"
import { Dispute, DisputeStatus } from "../../Domain/Dispute.js"
import { DisputeId, OrgId, ReceiptItemId } from "../../Domain/Ids.js"

/**
 * Disputes of charged receipt items, read and written through the `Dispute` model. A row is
 * read with its item's cost and hold (a join), so `Model.makeRepository` does not fit: its
 * insert answers the table's row alone.
 */
const Cursor = Schema.Struct({ created_at: Schema.DateFromSelf, id: DisputeId })

export class DisputesRepo extends Effect.Service<DisputesRepo>()("Purchasing/DisputesRepo", {
  effect: Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const select = sql`SELECT d.*, CASE WHEN d.status = 'open' THEN NULL ELSE d.status END AS decision,
        i.cost_credits AS item_cost, i.hold_id
      FROM disputes d JOIN receipt_items i ON i.id = d.item_id`

    const findById = SqlSchema.findOne({
      Request: Schema.Struct({ id: DisputeId, lock: Schema.Boolean }),
      Result: Dispute,
      execute: ({ id, lock }) =>
        lock ? sql`${select} WHERE d.id = ${id} FOR UPDATE OF d` : sql`${select} WHERE d.id = ${id}`
    })
    /** A dispute by id; `lock` for deciding it. */
    const byId = (id: DisputeId, lock: boolean) => findById({ id, lock }).pipe(Effect.orDie)

    /** One opener at a time per org, so the limit of open disputes holds under concurrency. */
    const lockOrgOpeners = (orgId: OrgId) =>
      sql`SELECT pg_advisory_xact_lock(hashtext(${`disputes:${orgId}`}))`.pipe(Effect.asVoid, Effect.orDie)

    const findForItem = SqlSchema.findOne({
      Request: ReceiptItemId,
      Result: Schema.Struct({ id: DisputeId }),
      execute: (itemId) => sql`SELECT id FROM disputes WHERE item_id = ${itemId}`
    })
    const forItem = (itemId: ReceiptItemId) =>
      findForItem(itemId).pipe(Effect.map(Option.map((row) => row.id)), Effect.orDie)

    const countOpen = SqlSchema.single({
      Request: OrgId,
      Result: Schema.Struct({ open: Schema.Number }),
      execute: (orgId) => sql`SELECT count(*)::int AS open FROM disputes WHERE org_id = ${orgId} AND status = 'open'`
    })
    const openCount = (orgId: OrgId) => countOpen(orgId).pipe(Effect.map((row) => row.open), Effect.orDie)

    const insertRow = SqlSchema.void({
      Request: Dispute.insert,
      execute: (row) => sql`INSERT INTO disputes ${sql.insert(row)}`
    })
    const insert = (row: typeof Dispute.insert.Type) => insertRow(row).pipe(Effect.orDie)

    const listPage = SqlSchema.findAll({
      Request: Schema.Struct({
        orgId: Schema.NullOr(OrgId),
        status: Schema.NullOr(DisputeStatus),
        after: Schema.NullOr(Cursor),
        limit: Schema.Number
      }),
      Result: Dispute,
      execute: ({ after, limit, orgId, status }) =>
        sql`${select}
          WHERE ${status === null ? sql`true` : sql`d.status = ${status}`}
            AND ${orgId === null ? sql`true` : sql`d.org_id = ${orgId}`}
            AND ${after === null ? sql`true` : sql`(d.created_at, d.id) > (${after.created_at}, ${after.id})`}
          ORDER BY d.created_at, d.id LIMIT ${limit}`
    })
    /** Oldest first, across orgs or in one, after the dispute `after` when given. */
    const list = (
      orgId: OrgId | null,
      status: DisputeStatus | null,
      after: typeof Cursor.Type | null,
      limit: number
    ) => listPage({ orgId, status, after, limit }).pipe(Effect.orDie)

    const recordDecision = (decision: {
      readonly id: DisputeId
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
