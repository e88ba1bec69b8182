import { Effect } from "effect"
import { isUuid } from "../../Domain/Ids.js"
import { amountOf } from "../../Domain/Money.js"
import { iso } from "../../Domain/Timestamps.js"
import { InvalidInput } from "../../Errors/ApiErrors.js"
import { RecordSigner } from "../Receipts/RecordSigner.js"
import { type CallFilters, type CallRow, GatewayRepo } from "./GatewayRepo.js"

/** The org's gateway calls as the dashboard lists them: endpoint, status, charge, latency. */

export const callRecord = (row: CallRow) => ({
  id: row.id,
  agent_id: row.agent_id,
  endpoint: row.endpoint_id,
  provider: row.provider_id,
  mode: row.mode,
  status: row.status,
  price: amountOf(row.price_credits),
  charged: amountOf(row.charged_credits),
  refunded: row.refunded_credits > 0n
    ? { ...amountOf(row.refunded_credits), reason: (row.refund_reason ?? "provider_error") as any }
    : null,
  provider_status: row.provider_status,
  latency_ms: row.latency_ms,
  created_at: iso(row.created_at),
  finished_at: row.finished_at === null ? null : iso(row.finished_at),
  request_hash: row.request_sha256,
  response_hash: row.response_sha256
})

export class CallLog extends Effect.Service<CallLog>()("Gateway/CallLog", {
  dependencies: [GatewayRepo.Default, RecordSigner.Default],
  effect: Effect.gen(function*() {
    const repo = yield* GatewayRepo
    const signer = yield* RecordSigner

    const list = (orgId: string, limit: number, startingAfter: string | undefined, filters: CallFilters = {}) =>
      Effect.gen(function*() {
        if (startingAfter !== undefined && !(isUuid(startingAfter) && (yield* repo.callExists(orgId, startingAfter)))) {
          return yield* new InvalidInput({ message: "`starting_after` is not a call of this org" })
        }
        if (filters.agentId !== undefined && !isUuid(filters.agentId)) {
          return yield* new InvalidInput({ message: "`agent_id` is not an agent id" })
        }
        const rows = yield* repo.listCalls(orgId, limit + 1, startingAfter, filters)
        // Each record is signed as it is read (Receipts/RecordSigner.ts): some 70 µs a record.
        const calls = yield* Effect.forEach(rows.slice(0, limit), (row) => signer.signed(callRecord(row)))
        return { calls, has_more: rows.length > limit }
      })

    /** The providers with their published daily caps (`GET /v1/providers`). */
    const providers = Effect.map(repo.providers, (rows) => ({ providers: rows }))

    return { list, providers } as const
  })
}) {}
