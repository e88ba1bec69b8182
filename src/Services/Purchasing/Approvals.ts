import { SqlClient } from "@effect/sql"
import { Clock, Effect, Option } from "effect"
import { randomBytes, randomUUID } from "node:crypto"
import type { ApprovalReason, ApprovalSummary } from "../../Domain/ApprovalSummary.js"
import { amountOf, creditsToUsd } from "../../Domain/Money.js"
import type { Approval, ApprovalStatus } from "../../Domain/Purchasing.js"
import { base62, sha256Hex } from "../../Domain/Secrets.js"
import {
  ApprovalExpired,
  ApprovalMismatch,
  ApprovalRejected,
  ApprovalRequired,
  Conflict,
  Forbidden,
  InvalidToken,
  NotFound
} from "../../Errors/ApiErrors.js"
import type { OrgActor } from "../Auth/Current.js"
import { requireOwner } from "../Auth/Roles.js"
import { Events } from "../Events/Events.js"
import { MailOutbox } from "../Mailer/MailOutbox.js"
import { purchasingRules } from "./PurchasingConfig.js"
import { isUuid } from "../../Domain/Ids.js"
import { escapeHtml } from "../../Domain/Html.js"

/**
 * Owner approvals of purchases over an agent's approval threshold or monthly budget.
 *
 * An approval locks the tool, the inputs (SHA-256 of their canonical JSON) and the amount;
 * it lives 24 hours. While one waits, the same purchase asked again gets the same approval
 * (no second mail). Every owner is mailed two one-click links (approve, reject): each a
 * random 256-bit token kept only as its SHA-256, single-use, valid until the approval
 * expires, and honoured only while its owner is still an owner. An approved approval pays
 * for exactly one purchase.
 */
export interface ApprovalRow {
  readonly id: string
  readonly org_id: string
  readonly agent_id: string
  readonly tool_id: string
  readonly tool_slug: string
  readonly tool_name: string
  readonly tool_provider: string
  readonly inputs_hash: string
  readonly item_count: number
  readonly amount_credits: string
  readonly reason: ApprovalReason
  readonly status: "waiting" | "approved" | "rejected"
  readonly note: string | null
  readonly decided_by: string | null
  readonly decided_by_email: string | null
  readonly decided_via: "session" | "org_key" | "email_link" | null
  readonly created_at: Date
  readonly expires_at: Date
  readonly decided_at: Date | null
  readonly receipt_id: string | null
  readonly used_at: Date | null
}

export interface ApprovalRequest {
  readonly orgId: string
  readonly agentId: string
  readonly agentName: string
  readonly tool: { readonly id: string; readonly slug: string; readonly name: string }
  readonly inputsHash: string
  readonly itemCount: number
  readonly amount: bigint
  readonly reason: ApprovalReason
  /** Public base address, for the links in the owners' mails. */
  readonly baseUrl: string
}

export const APPROVAL_LINK_PREFIX = "apl_"

const approvalColumns = `a.*, t.slug AS tool_slug, t.name AS tool_name, t.provider AS tool_provider`

/** What an approval is now: a waiting or approved-and-unused approval past its expiry is expired. */
export const effectiveStatus = (row: Pick<ApprovalRow, "status" | "expires_at" | "used_at">, now: number): ApprovalStatus =>
  (row.status === "waiting" || (row.status === "approved" && row.used_at === null)) && now >= row.expires_at.getTime()
    ? "expired"
    : row.status

export const approvalView = (row: ApprovalRow, now: number): Approval => ({
  id: row.id,
  status: effectiveStatus(row, now),
  reason: row.reason,
  agent_id: row.agent_id,
  tool: { id: row.tool_id, slug: row.tool_slug, name: row.tool_name, provider: row.tool_provider },
  item_count: row.item_count,
  amount: amountOf(BigInt(row.amount_credits)),
  note: row.note,
  decided_by_email: row.decided_by_email,
  decided_via: row.decided_via,
  created_at: row.created_at.toISOString(),
  expires_at: row.expires_at.toISOString(),
  decided_at: row.decided_at?.toISOString() ?? null,
  used: row.used_at !== null,
  receipt_id: row.receipt_id
})

const summaryOf = (row: ApprovalRow): ApprovalSummary => ({
  id: row.id,
  status: "waiting",
  reason: row.reason,
  tool_id: row.tool_id,
  item_count: row.item_count,
  amount: amountOf(BigInt(row.amount_credits)),
  expires_at: row.expires_at.toISOString()
})

const approvalRequired = (row: ApprovalRow) =>
  new ApprovalRequired({
    message: row.reason === "over_budget"
      ? "This purchase would take the agent over its monthly budget; an org owner must approve it. Retry with approval_id once approved."
      : "This purchase is above the agent's approval threshold; an org owner must approve it. Retry with approval_id once approved.",
    approval: summaryOf(row)
  })

export class Approvals extends Effect.Service<Approvals>()("Purchasing/Approvals", {
  effect: Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const events = yield* Events
    const outbox = yield* MailOutbox
    const cols = sql.unsafe(approvalColumns)

    const byId = (id: string, lock: boolean) =>
      (isUuid(id)
        ? (lock
          ? sql<ApprovalRow>`SELECT ${cols} FROM purchase_approvals a JOIN tools t ON t.id = a.tool_id WHERE a.id = ${id} FOR UPDATE OF a`
          : sql<ApprovalRow>`SELECT ${cols} FROM purchase_approvals a JOIN tools t ON t.id = a.tool_id WHERE a.id = ${id}`)
        : Effect.succeed([] as ReadonlyArray<ApprovalRow>)).pipe(Effect.map((rows) => Option.fromNullable(rows[0])), Effect.orDie)

    const notFound = new NotFound({ message: "No approval with that id in this org" })

    const owners = (orgId: string) =>
      sql<{ user_id: string; email: string }>`
        SELECT u.id AS user_id, u.email FROM org_members m JOIN users u ON u.id = m.user_id
        WHERE m.org_id = ${orgId} AND m.role = 'owner' ORDER BY u.email`.pipe(Effect.orDie)

    const mailOwners = (row: ApprovalRow, request: ApprovalRequest) =>
      Effect.gen(function*() {
        const amount = BigInt(row.amount_credits)
        for (const owner of yield* owners(row.org_id)) {
          const links: Record<"approve" | "reject", string> = { approve: "", reject: "" }
          for (const decision of ["approve", "reject"] as const) {
            const token = `${APPROVAL_LINK_PREFIX}${base62(randomBytes(32))}`
            yield* sql`
              INSERT INTO approval_links (token_hash, approval_id, user_id, decision, expires_at)
              VALUES (${sha256Hex(token)}, ${row.id}, ${owner.user_id}, ${decision}, ${row.expires_at})`.pipe(Effect.orDie)
            links[decision] = `${request.baseUrl}/v1/approval-links/${token}`
          }
          const why = row.reason === "over_budget"
            ? "it would take the agent over its monthly budget"
            : "it is above the agent's approval threshold"
          const text = [
            `The agent "${request.agentName}" wants to buy ${row.item_count} result${row.item_count === 1 ? "" : "s"} from ${request.tool.name} for up to ${amount} credits ($${creditsToUsd(amount)}).`,
            `It needs an owner's approval because ${why}.`,
            "",
            `Approve: ${links.approve}`,
            `Reject:  ${links.reject}`,
            "",
            `Each link opens a page with one button and works once. The request expires at ${row.expires_at.toISOString()}.`,
            `Approval id: ${row.id}`
          ].join("\n")
          const html = `<p>The agent <b>${escapeHtml(request.agentName)}</b> wants to buy ${row.item_count} result${
            row.item_count === 1 ? "" : "s"
          } from <b>${escapeHtml(request.tool.name)}</b> for up to ${amount} credits ($${creditsToUsd(amount)}).</p>
<p>It needs an owner's approval because ${why}.</p>
<p><a href="${escapeHtml(links.approve)}">Approve</a> &nbsp; <a href="${escapeHtml(links.reject)}">Reject</a></p>
<p>Each link opens a page with one button and works once. The request expires at ${row.expires_at.toISOString()}.</p>`
          yield* outbox.enqueue({
            to: owner.email,
            subject: `Approve a purchase of $${creditsToUsd(amount)} by ${request.agentName}?`,
            text,
            html,
            dedupeKey: `approval:${row.id}:${owner.user_id}`
          })
        }
      })

    /**
     * Fails with `approval_required` naming the approval: the one already waiting for this
     * same purchase, or a new one (event `approval.requested`, mails to the owners).
     */
    const request = (req: ApprovalRequest) =>
      sql.withTransaction(Effect.gen(function*() {
        const now = yield* Clock.currentTimeMillis
        const waiting = yield* sql<ApprovalRow>`
          SELECT ${cols} FROM purchase_approvals a JOIN tools t ON t.id = a.tool_id
          WHERE a.agent_id = ${req.agentId} AND a.tool_id = ${req.tool.id} AND a.inputs_hash = ${req.inputsHash}
            AND a.amount_credits = ${req.amount.toString()} AND a.status = 'waiting' AND a.expires_at > ${new Date(now)}
          ORDER BY a.created_at DESC LIMIT 1`.pipe(Effect.orDie)
        if (waiting[0] !== undefined) return waiting[0]
        const id = randomUUID()
        const createdAt = new Date(now)
        const expiresAt = new Date(now + purchasingRules.approvalLifetimeMs)
        yield* sql`
          INSERT INTO purchase_approvals ${
          sql.insert({
            id,
            org_id: req.orgId,
            agent_id: req.agentId,
            tool_id: req.tool.id,
            inputs_hash: req.inputsHash,
            item_count: req.itemCount,
            amount_credits: req.amount.toString(),
            reason: req.reason,
            status: "waiting",
            created_at: createdAt,
            expires_at: expiresAt
          })
        }`.pipe(Effect.orDie)
        const row = Option.getOrThrow(yield* byId(id, false))
        yield* events.emit(req.orgId, {
          type: "approval.requested",
          data: {
            approval_id: id,
            agent_id: req.agentId,
            tool_id: req.tool.id,
            item_count: req.itemCount,
            amount_credits: req.amount.toString(),
            amount_usd: creditsToUsd(req.amount),
            reason: req.reason,
            expires_at: expiresAt.toISOString()
          }
        })
        yield* mailOwners(row, req)
        return row
      })).pipe(
        Effect.catchTag("SqlError", Effect.die),
        Effect.flatMap((row) => Effect.fail(approvalRequired(row)))
      )

    /**
     * The approval a retried purchase names: it must be this agent's, not expired, not
     * rejected, decided, unused and for exactly this tool, these inputs and this amount.
     */
    const forPurchase = (
      agentId: string,
      approvalId: string,
      purchase: { readonly toolId: string; readonly inputsHash: string; readonly amount: bigint }
    ) =>
      Effect.gen(function*() {
        const found = yield* byId(approvalId, false)
        if (Option.isNone(found) || found.value.agent_id !== agentId) {
          return yield* new NotFound({ message: "No approval with that id for this agent" })
        }
        const row = found.value
        const now = yield* Clock.currentTimeMillis
        if (row.used_at !== null) {
          return yield* new Conflict({ message: `This approval was already used by receipt ${row.receipt_id}` })
        }
        if (now >= row.expires_at.getTime()) {
          return yield* new ApprovalExpired({ message: `Approval ${row.id} expired at ${row.expires_at.toISOString()}` })
        }
        if (row.status === "rejected") {
          return yield* new ApprovalRejected({
            message: row.note === null ? "An org owner declined this purchase" : `An org owner declined this purchase: ${row.note}`
          })
        }
        if (row.status === "waiting") return yield* approvalRequired(row)
        const differences = [
          row.tool_id !== purchase.toolId ? "tool" : undefined,
          row.inputs_hash !== purchase.inputsHash ? "inputs" : undefined,
          BigInt(row.amount_credits) !== purchase.amount ? "amount" : undefined
        ].filter((d): d is string => d !== undefined)
        if (differences.length > 0) {
          return yield* new ApprovalMismatch({
            message: `The ${differences.join(", ")} of this purchase differ from what was approved (${row.item_count} items of ${row.tool_slug} for ${row.amount_credits} credits)`
          })
        }
        return row
      })

    /** Marks the approval used by a receipt; call inside the purchase's transaction. */
    const consume = (approvalId: string, receiptId: string, now: Date) =>
      Effect.gen(function*() {
        const rows = yield* sql<{ id: string }>`
          UPDATE purchase_approvals SET used_at = ${now}, receipt_id = ${receiptId}
          WHERE id = ${approvalId} AND status = 'approved' AND used_at IS NULL RETURNING id`.pipe(Effect.orDie)
        if (rows.length === 0) return yield* new Conflict({ message: "This approval was already used by another purchase" })
      })

    const get = (orgId: string, id: string) =>
      Effect.gen(function*() {
        const row = yield* byId(id, false)
        if (Option.isNone(row) || row.value.org_id !== orgId) return yield* notFound
        return approvalView(row.value, yield* Clock.currentTimeMillis)
      })

    const list = (orgId: string, options: {
      readonly status?: ApprovalStatus | undefined
      readonly limit: number
      readonly startingAfter?: string | undefined
    }) =>
      Effect.gen(function*() {
        const now = new Date(yield* Clock.currentTimeMillis)
        let cursor: { created_at: Date; id: string } | undefined
        if (options.startingAfter !== undefined) {
          const row = yield* byId(options.startingAfter, false)
          if (Option.isNone(row) || row.value.org_id !== orgId) {
            return yield* new NotFound({ message: "starting_after names no approval of this org" })
          }
          cursor = { created_at: row.value.created_at, id: row.value.id }
        }
        const statusFilter = options.status === undefined
          ? sql`true`
          : options.status === "expired"
          ? sql`((a.status = 'waiting' OR (a.status = 'approved' AND a.used_at IS NULL)) AND a.expires_at <= ${now})`
          : options.status === "waiting"
          ? sql`(a.status = 'waiting' AND a.expires_at > ${now})`
          : options.status === "approved"
          ? sql`(a.status = 'approved' AND (a.used_at IS NOT NULL OR a.expires_at > ${now}))`
          : sql`a.status = 'rejected'`
        const after = cursor === undefined ? sql`true` : sql`(a.created_at, a.id) < (${cursor.created_at}, ${cursor.id})`
        const rows = yield* sql<ApprovalRow>`
          SELECT ${cols} FROM purchase_approvals a JOIN tools t ON t.id = a.tool_id
          WHERE a.org_id = ${orgId} AND ${statusFilter} AND ${after}
          ORDER BY a.created_at DESC, a.id DESC LIMIT ${options.limit + 1}`.pipe(Effect.orDie)
        return {
          approvals: rows.slice(0, options.limit).map((row) => approvalView(row, now.getTime())),
          has_more: rows.length > options.limit
        }
      })

    /** Records a decision on a locked, waiting, unexpired approval and emits `approval.decided`. */
    const settleDecision = (
      row: ApprovalRow,
      decision: "approve" | "reject",
      note: string | null,
      by: { readonly userId: string; readonly email: string; readonly via: "session" | "org_key" | "email_link" }
    ) =>
      Effect.gen(function*() {
        const now = yield* Clock.currentTimeMillis
        if (row.status !== "waiting") {
          return yield* new Conflict({ message: `This approval was already ${row.status}` })
        }
        if (now >= row.expires_at.getTime()) {
          return yield* new ApprovalExpired({ message: `Approval ${row.id} expired at ${row.expires_at.toISOString()}` })
        }
        const status = decision === "approve" ? "approved" as const : "rejected" as const
        yield* sql`
          UPDATE purchase_approvals SET status = ${status}, note = ${note}, decided_by = ${by.userId},
            decided_by_email = ${by.email}, decided_via = ${by.via}, decided_at = ${new Date(now)}
          WHERE id = ${row.id}`.pipe(Effect.orDie)
        yield* events.emit(row.org_id, {
          type: "approval.decided",
          data: { approval_id: row.id, agent_id: row.agent_id, status, note }
        })
        return approvalView(Option.getOrThrow(yield* byId(row.id, false)), now)
      })

    /** An owner (session or org key) approves or rejects. */
    const decide = (actor: OrgActor, approvalId: string, decision: "approve" | "reject", note: string | null) =>
      sql.withTransaction(Effect.gen(function*() {
        yield* requireOwner(actor)
        const row = yield* byId(approvalId, true)
        if (Option.isNone(row) || row.value.org_id !== actor.org_id) return yield* notFound
        return yield* settleDecision(row.value, decision, note, {
          userId: actor.user_id,
          email: actor.email,
          via: actor.via
        })
      })).pipe(Effect.catchTag("SqlError", Effect.die))

    interface LinkRow {
      readonly token_hash: string
      readonly approval_id: string
      readonly user_id: string
      readonly email: string
      readonly role: string | null
      readonly decision: "approve" | "reject"
      readonly expires_at: Date
      readonly used_at: Date | null
    }

    const invalidLink = new InvalidToken({ message: "This approval link is invalid, used or expired" })

    const link = (token: string, lock: boolean) =>
      Effect.gen(function*() {
        if (!token.startsWith(APPROVAL_LINK_PREFIX) || token.length > 100) return yield* invalidLink
        const hash = sha256Hex(token)
        const rows = yield* (lock
          ? sql<LinkRow>`
              SELECT l.*, u.email, m.role FROM approval_links l
              JOIN purchase_approvals a ON a.id = l.approval_id
              JOIN users u ON u.id = l.user_id
              LEFT JOIN org_members m ON m.org_id = a.org_id AND m.user_id = l.user_id
              WHERE l.token_hash = ${hash} FOR UPDATE OF l`
          : sql<LinkRow>`
              SELECT l.*, u.email, m.role FROM approval_links l
              JOIN purchase_approvals a ON a.id = l.approval_id
              JOIN users u ON u.id = l.user_id
              LEFT JOIN org_members m ON m.org_id = a.org_id AND m.user_id = l.user_id
              WHERE l.token_hash = ${hash}`).pipe(Effect.orDie)
        const found = rows[0]
        const now = yield* Clock.currentTimeMillis
        if (found === undefined || found.used_at !== null || now >= found.expires_at.getTime()) return yield* invalidLink
        if (found.role !== "owner") return yield* new Forbidden({ message: "Only an org owner can do this" })
        return found
      })

    /** What the page behind a mailed link shows (nothing is decided by opening it). */
    const linkPreview = (token: string) =>
      Effect.gen(function*() {
        const found = yield* link(token, false)
        const row = Option.getOrThrow(yield* byId(found.approval_id, false))
        return { decision: found.decision, approval: approvalView(row, yield* Clock.currentTimeMillis) }
      })

    /** The one click: decides with the link's decision, as its owner; the link is used up. */
    const decideByLink = (token: string) =>
      sql.withTransaction(Effect.gen(function*() {
        const found = yield* link(token, true)
        const row = yield* byId(found.approval_id, true)
        if (Option.isNone(row)) return yield* invalidLink
        const now = new Date(yield* Clock.currentTimeMillis)
        yield* sql`UPDATE approval_links SET used_at = ${now} WHERE token_hash = ${found.token_hash}`.pipe(Effect.orDie)
        const approval = yield* settleDecision(row.value, found.decision, null, {
          userId: found.user_id,
          email: found.email,
          via: "email_link"
        })
        return { decision: found.decision, approval }
      })).pipe(Effect.catchTag("SqlError", Effect.die))

    return { request, forPurchase, consume, get, list, decide, linkPreview, decideByLink } as const
  })
}) {}
