import { SqlClient } from "@effect/sql"
import { Effect, Schema } from "effect"
import { commonLimits } from "../../Domain/Plans.js"
import { AupLimit, ProviderQuota } from "../../Errors/ApiErrors.js"
import { holdGate, type HoldGateFragment } from "../Ledger/HoldFence.js"
import { statementRows } from "../StatementRows.js"

/**
 * Daily limits on gateway purchases, counted per calendar day in UTC (reset 00:00 UTC):
 * - each provider's published daily call cap, per org (429 `provider_quota`);
 * - at most 500 people lookups per company domain per org (429 `aup_limit`).
 *
 * Counters are rows changed with one conditional upsert each, so they hold across
 * replicas. `gate` counts a call in the same statement as its hold (the counter rows are
 * locked first, then the agent's month and the org's balance, as in every hold, and only
 * while that one statement runs); a call the ledger then refuses gives its counts back
 * with `giveBack`. A crash between the two can leave one call counted that was never
 * made: a daily limit, not money, errs by one toward caution.
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

/** What one count took: the provider's call, and whether the people lookup passed too. */
const Counted = Schema.Struct({ calls: Schema.Number, passed: Schema.Number })
const decodeCounted = Schema.decodeUnknown(Counted)
const Counts = Schema.Struct({ calls: Schema.NullOr(Schema.Number), lookups: Schema.NullOr(Schema.Number) })

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
    const countsRows = statementRows(Counts)

    /**
     * The counting of one call against the limits, as the gate of the call's hold (one
     * statement with the hold: HoldFence.ts). The provider's count is taken first, then the
     * people lookup's; `passed` has a row only when both passed. A refused lookup gives the
     * provider's count back (`judge`); a hold the ledger refused gives both back (`undo`).
     * With `after` (an earlier gate's relation, see `gateThen`), nothing is counted
     * unless that gate passed.
     */
    const gate = (request: QuotaRequest, after?: HoldGateFragment) =>
      holdGate({
        steps: sql`
          q AS (
            INSERT INTO provider_daily_calls AS q (org_id, provider_id, day, calls)
            SELECT ${request.orgId}, ${request.providerId}, ${request.day}, 1
            WHERE ${request.dailyCap} >= 1${after === undefined ? sql`` : sql` AND EXISTS (SELECT 1 FROM ${after})`}
            ON CONFLICT (org_id, provider_id, day) DO UPDATE SET calls = q.calls + 1 WHERE q.calls < ${request.dailyCap}
            RETURNING 1
          ),
          l AS (
            INSERT INTO people_lookups_daily AS l (org_id, domain, day, lookups)
            SELECT ${request.orgId}, ${request.peopleDomain ?? ""}, ${request.day}, 1
            FROM q WHERE ${request.peopleDomain !== null}
            ON CONFLICT (org_id, domain, day) DO UPDATE SET lookups = l.lookups + 1
            WHERE l.lookups < ${PEOPLE_LOOKUPS_PER_DOMAIN_PER_DAY}
            RETURNING 1
          ),
          passed AS (
            SELECT 1 AS one FROM q WHERE ${request.peopleDomain === null} OR EXISTS (SELECT 1 FROM l)
          )`,
        passed: sql`passed`,
        report: sql`json_build_object('calls', (SELECT count(*) FROM q), 'passed', (SELECT count(*) FROM passed))`,
        judge: (report) =>
          Effect.gen(function*() {
            const counted = yield* decodeCounted(report).pipe(Effect.orDie)
            if (counted.calls === 0) return yield* providerQuota(request)
            if (counted.passed === 0) {
              // The provider's count was taken but the people lookup refused: give it back.
              yield* giveBackCall(request)
              return yield* aupLimit(request.peopleDomain ?? "")
            }
          }),
        undo: Effect.suspend(() => giveBack(request))
      })

    const giveBackCall = (request: QuotaRequest) =>
      sql`
        UPDATE provider_daily_calls SET calls = calls - 1
        WHERE org_id = ${request.orgId} AND provider_id = ${request.providerId} AND day = ${request.day} AND calls > 0`
        .pipe(
          Effect.asVoid,
          Effect.orDie
        )

    /** Takes back the counts of a purchase that did not go ahead. */
    const giveBack = (request: QuotaRequest) =>
      Effect.gen(function*() {
        yield* giveBackCall(request)
        if (request.peopleDomain !== null) {
          yield* sql`
            UPDATE people_lookups_daily SET lookups = lookups - 1
            WHERE org_id = ${request.orgId} AND domain = ${request.peopleDomain} AND day = ${request.day}
              AND lookups > 0`.pipe(Effect.orDie)
        }
      })

    /** Checks the limits without counting (test keys rehearse them without using them up). */
    const check = (request: QuotaRequest) =>
      Effect.gen(function*() {
        const row = yield* countsRows.single(sql`
          SELECT
            (SELECT calls FROM provider_daily_calls
              WHERE org_id = ${request.orgId} AND provider_id = ${request.providerId} AND day = ${request.day}) AS calls,
            (SELECT lookups FROM people_lookups_daily
              WHERE org_id = ${request.orgId} AND domain = ${request.peopleDomain ?? ""} AND day = ${request.day})
              AS lookups`).pipe(Effect.orDie)
        if ((row.calls ?? 0) >= request.dailyCap) return yield* providerQuota(request)
        if (request.peopleDomain !== null && (row.lookups ?? 0) >= PEOPLE_LOOKUPS_PER_DOMAIN_PER_DAY) {
          return yield* aupLimit(request.peopleDomain)
        }
      })

    return { gate, giveBack, check } as const
  })
}) {}
