import { SqlClient, SqlSchema, type Statement } from "@effect/sql"
import { Effect, Schema } from "effect"
import { type CallStatus, GatewayCall } from "../../Domain/GatewayCall.js"
import type { AgentId } from "../../Domain/Ids.js"
import { holdRecord, type HoldTaken } from "../Ledger/HoldFence.js"
import { type HoldSettled, settlementWrite } from "../Ledger/SettlementFence.js"

/** SQL of the gateway: the call log (never request or response contents). */

/** A call row as written: pending with its hold (live), or finished (test). */
export type NewCall = typeof GatewayCall.insert.Type

export interface CallFinish {
  readonly holdId: string
  readonly status: CallStatus
  readonly chargedCredits: bigint
  readonly refundedCredits: bigint
  readonly refundReason: string | null
  readonly providerStatus: number | null
  readonly latencyMs: number
  readonly finishedAt: Date
  readonly responseSha256: string | null
}

const callColumns = `id, org_id, agent_id, endpoint_id, provider_id, mode, status, price_credits, charged_credits,
  refunded_credits, refund_reason, provider_status, latency_ms, created_at, finished_at, request_sha256, response_sha256`

export interface CallFilters {
  readonly agentId?: AgentId | undefined
  readonly status?: string | undefined
  readonly endpoint?: string | undefined
  readonly endpointContains?: string | undefined
  readonly from?: Date | undefined
  readonly until?: Date | undefined
}

export class GatewayRepo extends Effect.Service<GatewayRepo>()("Gateway/GatewayRepo", {
  effect: Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const callCols = sql.unsafe(callColumns)

    const insertCall = (call: NewCall) =>
      sql`
        INSERT INTO gateway_calls (id, org_id, agent_id, endpoint_id, provider_id, mode, status, price_credits,
                                   charged_credits, hold_id, latency_ms, created_at, finished_at, request_sha256,
                                   response_sha256)
        VALUES (${call.id}, ${call.org_id}, ${call.agent_id}, ${call.endpoint_id}, ${call.provider_id}, ${call.mode},
                ${call.status}, ${call.price_credits.toString()}, ${call.charged_credits.toString()}, ${call.hold_id},
                ${call.latency_ms}, ${call.created_at}, ${call.finished_at}, ${call.request_sha256},
                ${call.response_sha256})`
        .pipe(Effect.asVoid, Effect.orDie)

    /**
     * The pending call row, written in the statement of the call's hold exactly when the
     * hold is taken (HoldFence.ts), with the hold's id.
     */
    const pendingCallRow = (call: NewCall) => (taken: HoldTaken) =>
      holdRecord(sql`
        INSERT INTO gateway_calls (id, org_id, agent_id, endpoint_id, provider_id, mode, status, price_credits,
                                   charged_credits, hold_id, created_at, request_sha256)
        SELECT ${call.id}, ${call.org_id}, ${call.agent_id}, ${call.endpoint_id}, ${call.provider_id}, ${call.mode},
               'pending', ${call.price_credits.toString()}, 0, taken.id, ${call.created_at}, ${call.request_sha256}
        FROM ${taken} AS taken
        RETURNING 1`)

    // The row is found by its key alone: its status is compared as an expression, which the
    // partial index of pending calls cannot serve (on statistics taken before many calls were
    // in flight, `status = 'pending'` made the planner read every pending call to find it).
    const finishCallWhere = (id: string, finish: CallFinish, condition: Statement.Fragment) =>
      sql`
        UPDATE gateway_calls SET status = ${finish.status}, charged_credits = ${finish.chargedCredits.toString()},
          refunded_credits = ${finish.refundedCredits.toString()}, refund_reason = ${finish.refundReason},
          provider_status = ${finish.providerStatus}, latency_ms = ${finish.latencyMs}, finished_at = ${finish.finishedAt},
          hold_id = ${finish.holdId}, response_sha256 = ${finish.responseSha256}
        WHERE id = ${id} AND (status || '') = 'pending' AND ${condition}`

    const finishCall = (id: string, finish: CallFinish) =>
      finishCallWhere(id, finish, sql`true`).pipe(Effect.asVoid, Effect.orDie)

    /** The call row's completion, written in the settlement's statement when it settled the hold. */
    const finishCallStatement = (id: string, finish: CallFinish, settled: HoldSettled) =>
      settlementWrite(finishCallWhere(id, finish, settled))

    /** The org's calls, newest first, after the `startingAfter` call when given. */
    const listPage = SqlSchema.findAll({
      Request: Schema.Struct({
        orgId: Schema.String,
        limit: Schema.Number,
        startingAfter: Schema.NullOr(Schema.String),
        agentId: Schema.NullOr(Schema.String),
        status: Schema.NullOr(Schema.String),
        endpoint: Schema.NullOr(Schema.String),
        endpointContains: Schema.NullOr(Schema.String),
        from: Schema.NullOr(Schema.DateFromSelf),
        until: Schema.NullOr(Schema.DateFromSelf)
      }),
      Result: GatewayCall,
      execute: ({ agentId, endpoint, endpointContains, from, limit, orgId, startingAfter, status, until }) =>
        sql`
          SELECT ${callCols} FROM gateway_calls
          WHERE org_id = ${orgId}
          ${agentId === null ? sql`` : sql`AND agent_id = ${agentId}`}
          ${status === null ? sql`` : sql`AND status = ${status}`}
          ${endpoint === null ? sql`` : sql`AND endpoint_id = ${endpoint}`}
          ${endpointContains === null ? sql`` : sql`AND strpos(lower(endpoint_id), lower(${endpointContains})) > 0`}
          ${from === null ? sql`` : sql`AND created_at >= ${from}`}
          ${until === null ? sql`` : sql`AND created_at < ${until}`}
          ${
          startingAfter === null ? sql`` : sql`AND (created_at, id) < (
              SELECT created_at, id FROM gateway_calls WHERE id = ${startingAfter} AND org_id = ${orgId})`
        }
          ORDER BY created_at DESC, id DESC
          LIMIT ${limit}`
    })
    /** The org's calls, newest first, optionally of one agent, status or endpoint. */
    const listCalls = (orgId: string, limit: number, startingAfter: string | undefined, filters: CallFilters = {}) =>
      listPage({
        orgId,
        limit,
        startingAfter: startingAfter ?? null,
        agentId: filters.agentId ?? null,
        status: filters.status ?? null,
        endpoint: filters.endpoint ?? null,
        endpointContains: filters.endpointContains ?? null,
        from: filters.from ?? null,
        until: filters.until ?? null
      }).pipe(Effect.orDie)

    const callExists = (orgId: string, id: string) =>
      sql`SELECT 1 AS one FROM gateway_calls WHERE id = ${id} AND org_id = ${orgId}`.pipe(
        Effect.map((rows) => rows.length > 0),
        Effect.orDie
      )

    /**
     * Completes calls a crash left pending once their hold is settled: released (by the
     * sweeper) means `abandoned`, nothing charged; captured means `succeeded` for what was
     * captured. A pending row is written with its hold and completed with its settlement,
     * so the last two cases (and a pending row without any hold older than
     * `orphanedBefore`, made `abandoned`) are safety nets, not expected paths.
     */
    const markAbandoned = (now: Date, orphanedBefore: Date) =>
      Effect.gen(function*() {
        const settled = yield* sql`
          UPDATE gateway_calls c SET
            status = CASE WHEN h.status = 'captured' THEN 'succeeded' ELSE 'abandoned' END,
            charged_credits = h.captured,
            refunded_credits = c.price_credits - h.captured,
            refund_reason = CASE WHEN h.status = 'captured' AND h.captured < c.price_credits THEN 'lower_cost_reported'
                                 WHEN h.status = 'released' THEN 'abandoned' END,
            hold_id = h.id,
            finished_at = ${now}
          FROM ledger_holds h
          WHERE h.reference = c.id::text AND NOT h.refused AND c.status = 'pending' AND h.status <> 'held'
          RETURNING c.id`
        const orphaned = yield* sql`
          UPDATE gateway_calls c SET status = 'abandoned', refunded_credits = 0, finished_at = ${now}
          WHERE c.status = 'pending' AND c.created_at < ${orphanedBefore}
            AND NOT EXISTS (SELECT 1 FROM ledger_holds h WHERE h.reference = c.id::text AND NOT h.refused)
          RETURNING c.id`
        return settled.length + orphaned.length
      }).pipe(Effect.orDie)

    return {
      insertCall,
      pendingCallRow,
      finishCall,
      finishCallStatement,
      listCalls,
      callExists,
      markAbandoned
    } as const
  })
}) {}
