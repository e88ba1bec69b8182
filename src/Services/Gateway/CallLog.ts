import { Effect, Schema } from "effect"
import { GatewayCall, refundedOf } from "../../Domain/GatewayCall.js"
import type { CallId } from "../../Domain/Ids.js"
import { InvalidInput } from "../../Errors/ApiErrors.js"
import { CatalogueRepo } from "../Catalogue/CatalogueRepo.js"
import { RecordSigner } from "../Receipts/RecordSigner.js"
import { type CallFilters, GatewayRepo } from "./GatewayRepo.js"

/** The org's gateway calls as the dashboard lists them: endpoint, status, charge, latency. */
const wireColumns = Schema.encode(GatewayCall.json)

export class CallLog extends Effect.Service<CallLog>()("Gateway/CallLog", {
  dependencies: [GatewayRepo.Default, CatalogueRepo.Default, RecordSigner.Default],
  effect: Effect.gen(function*() {
    const repo = yield* GatewayRepo
    const catalogue = yield* CatalogueRepo
    const signer = yield* RecordSigner

    /**
     * A call of the list: the row, its refund and the signature of the record as the wire
     * shows it (the HttpApi encodes the same record again on the way out).
     */
    const signedRecord = (call: GatewayCall) =>
      Effect.gen(function*() {
        const refunded = refundedOf(call)
        const { signature } = yield* signer.signed({ ...(yield* wireColumns(call)), refunded })
        return { ...call, refunded, signature }
      }).pipe(Effect.catchTag("ParseError", Effect.die))

    /** Ids arrive decoded (the endpoint's schema); a cursor must still be one of this org's calls. */
    const list = (
      orgId: string,
      limit: number,
      startingAfter: CallId | undefined,
      filters: CallFilters = {}
    ) =>
      Effect.gen(function*() {
        if (startingAfter !== undefined && !(yield* repo.callExists(orgId, startingAfter))) {
          return yield* new InvalidInput({ message: "`starting_after` is not a call of this org" })
        }
        const rows = yield* repo.listCalls(orgId, limit + 1, startingAfter, filters)
        // Each record is signed as it is read (Receipts/RecordSigner.ts): some 70 µs a record.
        const calls = yield* Effect.forEach(rows.slice(0, limit), signedRecord)
        return { calls, has_more: rows.length > limit }
      })

    /** The providers with their published daily caps (`GET /v1/providers`). */
    const providers = Effect.map(catalogue.providers, (rows) => ({ providers: rows }))

    return { list, providers } as const
  })
}) {}
