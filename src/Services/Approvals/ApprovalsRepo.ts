import { SqlClient, SqlSchema } from "@effect/sql"
import { Effect, Option, Schema } from "effect"
import { type ApprovalStatus, type DecidedVia, PurchaseApproval } from "../../Domain/Approval.js"
import { ApprovalId, UserId } from "../../Domain/Ids.js"
import { statementRows } from "../StatementRows.js"

/**
 * The approvals' tables: `purchase_approvals` (the `PurchaseApproval` model, read with its
 * tool) and `approval_links`.
 */
export const LinkRow = Schema.Struct({
  token_hash: Schema.String,
  approval_id: ApprovalId,
  user_id: UserId,
  email: Schema.String,
  /** The user's role in the approval's org now (null: no longer a member). */
  role: Schema.NullOr(Schema.String),
  decision: Schema.Literal("approve", "reject"),
  expires_at: Schema.DateFromSelf,
  used_at: Schema.NullOr(Schema.DateFromSelf)
})
export type LinkRow = typeof LinkRow.Type

export interface Decision {
  readonly status: "approved" | "rejected"
  readonly note: string | null
  readonly userId: string
  readonly email: string
  readonly via: DecidedVia
  readonly at: Date
}

const approvalColumns = `a.*, t.slug AS tool_slug, t.name AS tool_name, t.provider AS tool_provider`

export class ApprovalsRepo extends Effect.Service<ApprovalsRepo>()("Approvals/ApprovalsRepo", {
  effect: Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const approvalRows = statementRows(PurchaseApproval)
    const cols = sql.unsafe(approvalColumns)

    const findById = SqlSchema.findOne({
      Request: Schema.Struct({ id: ApprovalId, lock: Schema.Boolean }),
      Result: PurchaseApproval,
      execute: ({ id, lock }) =>
        sql`SELECT ${cols} FROM purchase_approvals a JOIN tools t ON t.id = a.tool_id WHERE a.id = ${id}
            ${lock ? sql`FOR UPDATE OF a` : sql``}`
    })

    /** One approval with its tool; `lock` takes its row for the transaction. */
    const byId = (id: ApprovalId, lock: boolean) => findById({ id, lock }).pipe(Effect.orDie)

    const findWaiting = SqlSchema.findOne({
      Request: Schema.Struct({
        agentId: Schema.String,
        toolId: Schema.String,
        inputsHash: Schema.String,
        amount: Schema.BigInt,
        now: Schema.DateFromSelf
      }),
      Result: PurchaseApproval,
      execute: (purchase) =>
        sql`
          SELECT ${cols} FROM purchase_approvals a JOIN tools t ON t.id = a.tool_id
          WHERE a.agent_id = ${purchase.agentId} AND a.tool_id = ${purchase.toolId}
            AND a.inputs_hash = ${purchase.inputsHash} AND a.amount_credits = ${purchase.amount}
            AND a.status = 'waiting' AND a.expires_at > ${purchase.now}
          ORDER BY a.created_at DESC LIMIT 1`
    })

    /** The approval already waiting for this very purchase, if one is. */
    const waitingFor = (purchase: {
      readonly agentId: string
      readonly toolId: string
      readonly inputsHash: string
      readonly amount: bigint
      readonly now: Date
    }) => findWaiting(purchase).pipe(Effect.orDie)

    const insertRow = SqlSchema.void({
      Request: PurchaseApproval.insert,
      execute: (approval) => sql`INSERT INTO purchase_approvals ${sql.insert(approval)}`
    })
    const insert = (approval: typeof PurchaseApproval.insert.Type) => insertRow(approval).pipe(Effect.orDie)

    const insertLink = (link: {
      readonly tokenHash: string
      readonly approvalId: string
      readonly userId: string
      readonly decision: "approve" | "reject"
      readonly expiresAt: Date
    }) =>
      sql`
        INSERT INTO approval_links (token_hash, approval_id, user_id, decision, expires_at)
        VALUES (${link.tokenHash}, ${link.approvalId}, ${link.userId}, ${link.decision}, ${link.expiresAt})`.pipe(
        Effect.asVoid,
        Effect.orDie
      )

    /** Marks an approved, unused approval used by a receipt; false when it was not. */
    const markUsed = (approvalId: string, receiptId: string, now: Date) =>
      sql`
        UPDATE purchase_approvals SET used_at = ${now}, receipt_id = ${receiptId}
        WHERE id = ${approvalId} AND status = 'approved' AND used_at IS NULL RETURNING id`.pipe(
        Effect.map((rows) => rows.length > 0),
        Effect.orDie
      )

    /** A page of the org's approvals, newest first, filtered by what their status is at `now`. */
    const list = (orgId: string, options: {
      readonly status?: ApprovalStatus | undefined
      readonly limit: number
      readonly after?: { readonly created_at: Date; readonly id: string } | undefined
      readonly now: Date
    }) => {
      const now = options.now
      const statusFilter = options.status === undefined
        ? sql`true`
        : options.status === "expired"
        ? sql`((a.status = 'waiting' OR (a.status = 'approved' AND a.used_at IS NULL)) AND a.expires_at <= ${now})`
        : options.status === "waiting"
        ? sql`(a.status = 'waiting' AND a.expires_at > ${now})`
        : options.status === "approved"
        ? sql`(a.status = 'approved' AND (a.used_at IS NOT NULL OR a.expires_at > ${now}))`
        : sql`a.status = 'rejected'`
      const after = options.after === undefined
        ? sql`true`
        : sql`(a.created_at, a.id) < (${options.after.created_at}, ${options.after.id})`
      return approvalRows.all(sql`
            SELECT ${cols} FROM purchase_approvals a JOIN tools t ON t.id = a.tool_id
            WHERE a.org_id = ${orgId} AND ${statusFilter} AND ${after}
            ORDER BY a.created_at DESC, a.id DESC LIMIT ${options.limit}`).pipe(Effect.orDie)
    }

    const recordDecision = (approvalId: string, decision: Decision) =>
      sql`
        UPDATE purchase_approvals SET status = ${decision.status}, note = ${decision.note}, decided_by = ${decision.userId},
          decided_by_email = ${decision.email}, decided_via = ${decision.via}, decided_at = ${decision.at}
        WHERE id = ${approvalId}`.pipe(Effect.asVoid, Effect.orDie)

    const findLink = SqlSchema.findOne({
      Request: Schema.Struct({ tokenHash: Schema.String, lock: Schema.Boolean }),
      Result: LinkRow,
      execute: ({ lock, tokenHash }) =>
        sql`
          SELECT l.*, u.email, m.role FROM approval_links l
          JOIN purchase_approvals a ON a.id = l.approval_id
          JOIN users u ON u.id = l.user_id
          LEFT JOIN org_members m ON m.org_id = a.org_id AND m.user_id = l.user_id
          WHERE l.token_hash = ${tokenHash} ${lock ? sql`FOR UPDATE OF l` : sql``}`
    })

    /** A mailed link by its token's hash, with its owner's email and current role. */
    const link = (tokenHash: string, lock: boolean) => findLink({ tokenHash, lock }).pipe(Effect.orDie)

    const useLink = (tokenHash: string, now: Date) =>
      sql`UPDATE approval_links SET used_at = ${now} WHERE token_hash = ${tokenHash}`.pipe(Effect.asVoid, Effect.orDie)

    const findAgent = SqlSchema.findOne({
      Request: Schema.String,
      Result: Schema.Struct({ name: Schema.String, mode: Schema.Literal("test", "live") }),
      execute: (agentId) => sql`SELECT name, mode FROM agents WHERE id = ${agentId}`
    })
    /** The name and mode of the agent that asked, for the mailed link's page. */
    const agentOf = (agentId: string) => Effect.map(Effect.orDie(findAgent(agentId)), Option.getOrThrow)

    return { agentOf, byId, waitingFor, insert, insertLink, markUsed, list, recordDecision, link, useLink } as const
  })
}) {}
