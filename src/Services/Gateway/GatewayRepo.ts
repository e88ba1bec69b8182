import { SqlClient, SqlSchema } from "@effect/sql"
import { Effect, Schema } from "effect"
import { type CallStatus, GatewayCall } from "../../Domain/GatewayCall.js"
import { type AgentId, CallId, HoldId } from "../../Domain/Ids.js"

/** SQL of the gateway: the call log (never request or response contents). */

/** A call row as written: pending with its hold (live), or finished (test). */
export type NewCall = typeof GatewayCall.insert.Type

export interface CallFinish {
  readonly id: CallId
  readonly holdId: HoldId
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

    const insertRows = SqlSchema.void({
      Request: Schema.Array(GatewayCall.insert),
      execute: (calls) => sql`INSERT INTO gateway_calls ${sql.insert(calls)}`
    })
    /** Writes calls' rows, any number in one statement: pending with their holds, or finished for test keys. */
    const insertCalls = (calls: ReadonlyArray<NewCall>) =>
      calls.length === 0 ? Effect.void : insertRows(calls).pipe(Effect.orDie)

    const FinishRow = Schema.Struct({
      id: CallId,
      hold_id: HoldId,
      status: Schema.String,
      charged_credits: Schema.BigInt,
      refunded_credits: Schema.BigInt,
      refund_reason: Schema.NullOr(Schema.String),
      provider_status: Schema.NullOr(Schema.Number),
      latency_ms: Schema.Number,
      finished_at: Schema.DateFromSelf,
      response_sha256: Schema.NullOr(Schema.String)
    })
    // Each row is found by its key, one by one (gateway_finish_calls, migration 0024): a join
    // of the batch with the table may be planned as a read of every call in flight.
    const finishRows = SqlSchema.void({
      Request: Schema.Array(FinishRow),
      execute: (rows) => sql`SELECT gateway_finish_calls(${JSON.stringify(rows)}::jsonb)`
    })
    /** Completes pending calls' rows, any number in one statement (with their settlements). */
    const finishCalls = (finishes: ReadonlyArray<CallFinish>) =>
      finishes.length === 0 ? Effect.void : finishRows(finishes.map((finish) => ({
        id: finish.id,
        hold_id: finish.holdId,
        status: finish.status,
        charged_credits: finish.chargedCredits,
        refunded_credits: finish.refundedCredits,
        refund_reason: finish.refundReason,
        provider_status: finish.providerStatus,
        latency_ms: finish.latencyMs,
        finished_at: finish.finishedAt,
        response_sha256: finish.responseSha256
      }))).pipe(Effect.orDie)

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
      insertCalls,
      finishCalls,
      listCalls,
      callExists,
      markAbandoned
    } as const
  })
}) {}
