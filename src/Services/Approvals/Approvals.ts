import { SqlClient } from "@effect/sql"
import { Clock, Effect, Option } from "effect"
import { randomBytes, randomUUID } from "node:crypto"
import { type ApprovalStatus, PurchaseApproval } from "../../Domain/Approval.js"
import type { ApprovalReason, ApprovalSummary } from "../../Domain/ApprovalSummary.js"
import type { OrgActor } from "../../Domain/Current.js"
import { type AgentId, ApprovalId, type OrgId } from "../../Domain/Ids.js"
import { amountOf, creditsToUsd } from "../../Domain/Money.js"
import type { Approval } from "../../Domain/Purchasing.js"
import { base62 } from "../../Domain/Secrets.js"
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
import { AuthConfig } from "../Auth/AuthConfig.js"
import { requireOwner } from "../Auth/Roles.js"
import { Events } from "../Events/Events.js"
import { approvalRequestMail } from "../Mailer/ApprovalMail.js"
import { MailOutbox } from "../Mailer/MailOutbox.js"
import { OrgOwners } from "../Mailer/OrgOwners.js"
import { sha256Hex } from "../SecretBox/Hashes.js"
import { ApprovalsRepo } from "./ApprovalsRepo.js"

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
export interface ApprovalRequest {
  readonly orgId: OrgId
  readonly agentId: AgentId
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

/** An approval (and its mailed links) lives this long: the specification's 24 hours. */
export const APPROVAL_LIFETIME_MS = 24 * 60 * 60 * 1000

/** What an approval is now: a waiting or approved-and-unused approval past its expiry is expired. */
export const effectiveStatus = (
  row: Pick<PurchaseApproval, "status" | "expires_at" | "used_at">,
  now: number
): ApprovalStatus =>
  (row.status === "waiting" || (row.status === "approved" && row.used_at === null)) && now >= row.expires_at.getTime()
    ? "expired"
    : row.status

/** The wire's approval: the record with its status now, its tool, and whether a purchase used it. */
export const approvalView = (row: PurchaseApproval, now: number): Approval => ({
  ...row,
  status: effectiveStatus(row, now),
  tool: { id: row.tool_id, slug: row.tool_slug, name: row.tool_name, provider: row.tool_provider },
  used: row.used_at !== null
})

const summaryOf = (row: PurchaseApproval): ApprovalSummary => ({
  id: row.id,
  status: "waiting",
  reason: row.reason,
  tool_id: row.tool_id,
  item_count: row.item_count,
  amount: amountOf(row.amount_credits),
  expires_at: row.expires_at.toISOString()
})

const approvalRequired = (row: PurchaseApproval) =>
  new ApprovalRequired({
    message: row.reason === "over_budget"
      ? "This purchase would take the agent over its monthly budget; an org owner must approve it. Retry with approval_id once approved."
      : "This purchase is above the agent's approval threshold; an org owner must approve it. Retry with approval_id once approved.",
    approval: summaryOf(row)
  })

export class Approvals extends Effect.Service<Approvals>()("Approvals/Approvals", {
  dependencies: [ApprovalsRepo.Default, OrgOwners.Default, AuthConfig.Default],
  effect: Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const repo = yield* ApprovalsRepo
    const events = yield* Events
    const outbox = yield* MailOutbox
    const orgOwners = yield* OrgOwners
    const { dashboardPath } = yield* AuthConfig

    const notFound = new NotFound({ message: "No approval with that id in this org" })

    /** Two single-use links per owner, and the mail that carries them. */
    const mailOwners = (row: PurchaseApproval, request: ApprovalRequest) =>
      Effect.gen(function*() {
        for (const owner of yield* orgOwners.of(row.org_id)) {
          const links: Record<"approve" | "reject", string> = { approve: "", reject: "" }
          for (const decision of ["approve", "reject"] as const) {
            const token = `${APPROVAL_LINK_PREFIX}${base62(randomBytes(32))}`
            yield* repo.insertLink({
              tokenHash: sha256Hex(token),
              approvalId: row.id,
              userId: owner.user_id,
              decision,
              expiresAt: row.expires_at
            })
            // The dashboard's page for the link shows the purchase and one button.
            links[decision] = `${request.baseUrl}${dashboardPath}/approve?token=${token}`
          }
          const mail = approvalRequestMail({
            agentName: request.agentName,
            toolName: request.tool.name,
            itemCount: row.item_count,
            amount: row.amount_credits,
            reason: row.reason,
            approvalId: row.id,
            expiresAt: row.expires_at,
            links
          })
          yield* outbox.enqueue({ to: owner.email, ...mail, dedupeKey: `approval:${row.id}:${owner.user_id}` })
        }
      })

    /**
     * Answers `approval_required` naming the approval (execute's 202 answer, a value, not a
     * failure): the one already waiting for this same purchase, or a new one (event
     * `approval.requested`, mails to the owners).
     */
    const request = (req: ApprovalRequest) =>
      sql.withTransaction(Effect.gen(function*() {
        const now = yield* Clock.currentTimeMillis
        const waiting = yield* repo.waitingFor({
          agentId: req.agentId,
          toolId: req.tool.id,
          inputsHash: req.inputsHash,
          amount: req.amount,
          now: new Date(now)
        })
        if (Option.isSome(waiting)) return waiting.value
        const id = ApprovalId.make(randomUUID())
        const expiresAt = new Date(now + APPROVAL_LIFETIME_MS)
        yield* repo.insert(PurchaseApproval.insert.make({
          id,
          org_id: req.orgId,
          agent_id: req.agentId,
          tool_id: req.tool.id,
          inputs_hash: req.inputsHash,
          item_count: req.itemCount,
          amount_credits: req.amount,
          reason: req.reason,
          status: "waiting",
          created_at: new Date(now),
          expires_at: expiresAt
        }))
        const row = Option.getOrThrow(yield* repo.byId(id, false))
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
        Effect.map(approvalRequired)
      )

    /**
     * The approval a retried purchase names: it must be this agent's, not expired, not
     * rejected, decided, unused and for exactly this tool, these inputs and this amount.
     */
    /**
     * The per-item price a granted approval locked for this tool, so a purchase retried under
     * it pays what was approved even after the tool's price changed; null otherwise (the
     * approval is then judged by forPurchase).
     */
    const lockedPrice = (agentId: string, approvalId: ApprovalId, toolId: string) =>
      Effect.map(
        repo.byId(approvalId, false),
        (found) =>
          Option.isSome(found) && found.value.agent_id === agentId && found.value.status === "approved" &&
            found.value.tool_id === toolId && found.value.item_count > 0
            ? found.value.amount_credits / BigInt(found.value.item_count)
            : null
      )

    const forPurchase = (
      agentId: string,
      approvalId: ApprovalId,
      purchase: { readonly toolId: string; readonly inputsHash: string; readonly amount: bigint }
    ) =>
      Effect.gen(function*() {
        const found = yield* repo.byId(approvalId, false)
        if (Option.isNone(found) || found.value.agent_id !== agentId) {
          return yield* new NotFound({ message: "No approval with that id for this agent" })
        }
        const row = found.value
        const now = yield* Clock.currentTimeMillis
        if (row.used_at !== null) {
          return yield* new Conflict({ message: `This approval was already used by receipt ${row.receipt_id}` })
        }
        if (now >= row.expires_at.getTime()) {
          return yield* new ApprovalExpired({
            message: `Approval ${row.id} expired at ${row.expires_at.toISOString()}`
          })
        }
        if (row.status === "rejected") {
          return yield* new ApprovalRejected({
            message: row.note === null
              ? "An org owner declined this purchase"
              : `An org owner declined this purchase: ${row.note}`
          })
        }
        if (row.status === "waiting") return yield* approvalRequired(row)
        const differences = [
          row.tool_id !== purchase.toolId ? "tool" : undefined,
          row.inputs_hash !== purchase.inputsHash ? "inputs" : undefined,
          row.amount_credits !== purchase.amount ? "amount" : undefined
        ].filter((d): d is string => d !== undefined)
        if (differences.length > 0) {
          return yield* new ApprovalMismatch({
            message: `The ${
              differences.join(", ")
            } of this purchase differ from what was approved (${row.item_count} items of ${row.tool_slug} for ${row.amount_credits} credits)`
          })
        }
        return row
      })

    /** Marks the approval used by a receipt; call inside the purchase's transaction. */
    const consume = (approvalId: string, receiptId: string, now: Date) =>
      Effect.flatMap(
        repo.markUsed(approvalId, receiptId, now),
        (used) =>
          used
            ? Effect.void
            : Effect.fail(new Conflict({ message: "This approval was already used by another purchase" }))
      )

    const get = (orgId: string, id: ApprovalId) =>
      Effect.gen(function*() {
        const row = yield* repo.byId(id, false)
        if (Option.isNone(row) || row.value.org_id !== orgId) return yield* notFound
        return approvalView(row.value, yield* Clock.currentTimeMillis)
      })

    const list = (orgId: string, options: {
      readonly status?: ApprovalStatus | undefined
      readonly limit: number
      readonly startingAfter?: ApprovalId | undefined
    }) =>
      Effect.gen(function*() {
        const now = new Date(yield* Clock.currentTimeMillis)
        let after: { created_at: Date; id: string } | undefined
        if (options.startingAfter !== undefined) {
          const row = yield* repo.byId(options.startingAfter, false)
          if (Option.isNone(row) || row.value.org_id !== orgId) {
            return yield* new NotFound({ message: "starting_after names no approval of this org" })
          }
          after = { created_at: row.value.created_at, id: row.value.id }
        }
        const rows = yield* repo.list(orgId, { status: options.status, limit: options.limit + 1, after, now })
        return {
          approvals: rows.slice(0, options.limit).map((row) => approvalView(row, now.getTime())),
          has_more: rows.length > options.limit
        }
      })

    /** Records a decision on a locked, waiting, unexpired approval and emits `approval.decided`. */
    const settleDecision = (
      row: PurchaseApproval,
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
          return yield* new ApprovalExpired({
            message: `Approval ${row.id} expired at ${row.expires_at.toISOString()}`
          })
        }
        const status = decision === "approve" ? "approved" as const : "rejected" as const
        yield* repo.recordDecision(row.id, { status, note, ...by, at: new Date(now) })
        yield* events.emit(row.org_id, {
          type: "approval.decided",
          data: { approval_id: row.id, agent_id: row.agent_id, status, note }
        })
        return approvalView(Option.getOrThrow(yield* repo.byId(row.id, false)), now)
      })

    /** An owner (session or org key) approves or rejects. */
    const decide = (actor: OrgActor, approvalId: ApprovalId, decision: "approve" | "reject", note: string | null) =>
      sql.withTransaction(Effect.gen(function*() {
        yield* requireOwner(actor)
        const row = yield* repo.byId(approvalId, true)
        if (Option.isNone(row) || row.value.org_id !== actor.org_id) return yield* notFound
        return yield* settleDecision(row.value, decision, note, {
          userId: actor.user_id,
          email: actor.email,
          via: actor.via
        })
      })).pipe(Effect.catchTag("SqlError", Effect.die))

    const invalidLink = new InvalidToken({ message: "This approval link is invalid, used or expired" })

    const link = (token: string, lock: boolean) =>
      Effect.gen(function*() {
        if (!token.startsWith(APPROVAL_LINK_PREFIX) || token.length > 100) return yield* invalidLink
        const found = yield* repo.link(sha256Hex(token), lock)
        const now = yield* Clock.currentTimeMillis
        if (Option.isNone(found) || found.value.used_at !== null || now >= found.value.expires_at.getTime()) {
          return yield* invalidLink
        }
        if (found.value.role !== "owner") return yield* new Forbidden({ message: "Only an org owner can do this" })
        return found.value
      })

    /** What the page behind a mailed link shows (nothing is decided by opening it). */
    const linkPreview = (token: string) =>
      Effect.gen(function*() {
        const found = yield* link(token, false)
        const row = Option.getOrThrow(yield* repo.byId(found.approval_id, false))
        const agent = yield* repo.agentOf(row.agent_id)
        return { decision: found.decision, agent, approval: approvalView(row, yield* Clock.currentTimeMillis) }
      })

    /** The one click: decides with the link's decision, as its owner; the link is used up. */
    const decideByLink = (token: string) =>
      sql.withTransaction(Effect.gen(function*() {
        const found = yield* link(token, true)
        const row = yield* repo.byId(found.approval_id, true)
        if (Option.isNone(row)) return yield* invalidLink
        yield* repo.useLink(found.token_hash, new Date(yield* Clock.currentTimeMillis))
        const approval = yield* settleDecision(row.value, found.decision, null, {
          userId: found.user_id,
          email: found.email,
          via: "email_link"
        })
        return { decision: found.decision, approval }
      })).pipe(Effect.catchTag("SqlError", Effect.die))

    return { request, lockedPrice, forPurchase, consume, get, list, decide, linkPreview, decideByLink } as const
  })
}) {}
