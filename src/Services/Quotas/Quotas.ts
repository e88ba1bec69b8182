import { SqlClient, SqlSchema } from "@effect/sql"
import { Effect, Either, Schema } from "effect"
import { commonLimits } from "../../Domain/Plans.js"
import { AupLimit, ProviderQuota } from "../../Errors/ApiErrors.js"

/**
 * Daily limits on gateway purchases, counted per calendar day in UTC (reset 00:00 UTC):
 * - each provider's published daily call cap, per org (429 `provider_quota`);
 * - at most 500 people lookups per company domain per org (429 `aup_limit`).
 *
 * Counters are rows, so they hold across replicas. `count` counts a batch of calls in one
 * statement (`quota_count`, migration 0023: each call exactly as one by one would), in the
 * transaction that then holds their credits; a call the ledger refuses gives its counts
 * back with `giveBack` in the same transaction, so a count stands exactly when its call's
 * hold does.
 */
export interface QuotaRequest {
  readonly orgId: string
  readonly providerId: string
  readonly dailyCap: number
  /** The company domain of a people lookup, when the endpoint is one. */
  readonly peopleDomain: string | null
  /** `YYYY-MM-DD` (UTC) of the purchase. */
  readonly day: string
}

export const PEOPLE_LOOKUPS_PER_DOMAIN_PER_DAY = commonLimits.people_lookups_per_domain_per_day

/** A call's counting in `quota_count`, as its argument writes it. */
const QuotaRow = Schema.Struct({
  org_id: Schema.String,
  provider_id: Schema.String,
  day: Schema.String,
  daily_cap: Schema.Number,
  domain: Schema.NullOr(Schema.String)
})
const Counted = Schema.Struct({
  idx: Schema.Number,
  outcome: Schema.Literal("counted", "provider_quota", "aup_limit")
})
const Counts = Schema.Struct({ calls: Schema.NullOr(Schema.Number), lookups: Schema.NullOr(Schema.Number) })

const rowOf = (request: QuotaRequest): typeof QuotaRow.Type => ({
  org_id: request.orgId,
  provider_id: request.providerId,
  day: request.day,
  daily_cap: request.dailyCap,
  domain: request.peopleDomain
})

/**
 * The company domain a people lookup is about: the registrable part of an address, URL
 * or email, lower-cased, without `www.`. Null when the value carries no domain.
 */
export const companyDomainOf = (value: unknown): string | null => {
  if (typeof value !== "string") return null
  let text = value.trim().toLowerCase()
  if (text.length === 0) return null
  const at = text.lastIndexOf("@")
  if (at >= 0) text = text.slice(at + 1)
  text = text.replace(/^[a-z][a-z0-9+.-]*:\/\//, "")
  text = text.split(/[/?#:]/, 1)[0] ?? ""
  text = text.replace(/^www\./, "").replace(/\.+$/, "")
  return text.length > 0 && text.includes(".") ? text : null
}

const providerQuota = (request: QuotaRequest) =>
  new ProviderQuota({
    message:
      `This org has made today's ${request.dailyCap} calls to ${request.providerId}; the count resets at 00:00 UTC`
  })

const aupLimit = (domain: string) =>
  new AupLimit({
    message: `At most ${PEOPLE_LOOKUPS_PER_DOMAIN_PER_DAY} people lookups per company domain a day (${domain})`
  })

export class Quotas extends Effect.Service<Quotas>()("Quotas/Quotas", {
  effect: Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient

    const countStatement = SqlSchema.findAll({
      Request: Schema.Array(QuotaRow),
      Result: Counted,
      execute: (rows) =>
        sql`SELECT idx, outcome FROM quota_count(${JSON.stringify(rows)}::jsonb, ${PEOPLE_LOOKUPS_PER_DOMAIN_PER_DAY})`
    })
    /**
     * Counts every call against its provider's cap and the people-lookup limit, in one
     * statement, in order: each call's refusal, or nothing when it was counted.
     */
    const count = (requests: ReadonlyArray<QuotaRequest>) =>
      requests.length === 0
        ? Effect.succeed([])
        : Effect.map(countStatement(requests.map(rowOf)).pipe(Effect.orDie), (rows) => {
          const outcomes = new Map(rows.map((row) => [row.idx, row.outcome]))
          return requests.map((request, i): Either.Either<void, ProviderQuota | AupLimit> => {
            switch (outcomes.get(i)) {
              case "provider_quota":
                return Either.left(providerQuota(request))
              case "aup_limit":
                return Either.left(aupLimit(request.peopleDomain ?? ""))
              default:
                return Either.void
            }
          })
        })

    const giveBackStatement = SqlSchema.void({
      Request: Schema.Array(QuotaRow),
      execute: (rows) => sql`SELECT quota_give_back(${JSON.stringify(rows)}::jsonb)`
    })
    /** Takes back the counts of calls that did not go ahead (in the transaction that counted them). */
    const giveBack = (requests: ReadonlyArray<QuotaRequest>) =>
      requests.length === 0 ? Effect.void : giveBackStatement(requests.map(rowOf)).pipe(Effect.orDie)

    const findCounts = SqlSchema.single({
      Request: QuotaRow,
      Result: Counts,
      execute: (row) =>
        sql`
          SELECT
            (SELECT calls FROM provider_daily_calls
              WHERE org_id = ${row.org_id} AND provider_id = ${row.provider_id} AND day = ${row.day}) AS calls,
            (SELECT lookups FROM people_lookups_daily
              WHERE org_id = ${row.org_id} AND domain = ${row.domain ?? ""} AND day = ${row.day}) AS lookups`
    })

    /** Checks the limits without counting (test keys rehearse them without using them up). */
    const check = (request: QuotaRequest) =>
      Effect.gen(function*() {
        const row = yield* findCounts(rowOf(request)).pipe(Effect.orDie)
        if ((row.calls ?? 0) >= request.dailyCap) return yield* providerQuota(request)
        if (request.peopleDomain !== null && (row.lookups ?? 0) >= PEOPLE_LOOKUPS_PER_DOMAIN_PER_DAY) {
          return yield* aupLimit(request.peopleDomain)
        }
      })

    return { count, giveBack, check } as const
  })
}) {}
