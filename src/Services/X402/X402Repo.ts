import { SqlClient, SqlSchema } from "@effect/sql"
import { Effect, Option, Schema } from "effect"
import { PayerSpendCap } from "../../Errors/ApiErrors.js"

/** SQL of x402 payments (migration 0027): one row per payment, from verification to settlement. */

export const PaymentStatus = Schema.Literal("running", "due", "settled", "nothing_due", "abandoned", "refused")
export type PaymentStatus = typeof PaymentStatus.Type

const Json = Schema.Unknown

/** What the first request answered, kept so the same payment answers it again. */
export const StoredAnswer = Schema.Struct({
  status: Schema.Number,
  body: Json,
  /** What the signed record adds to the payment's own fields (the call's or the purchase's facts). */
  record: Json
})
export type StoredAnswer = typeof StoredAnswer.Type

export const PaymentRow = Schema.Struct({
  id: Schema.String,
  kind: Schema.Literal("call", "purchase"),
  payer: Schema.String,
  payment_identifier: Schema.NullOr(Schema.String),
  fingerprint: Schema.String,
  authorization_sha256: Schema.String,
  scheme: Schema.String,
  network: Schema.String,
  asset: Schema.String,
  pay_to: Schema.String,
  subject: Schema.String,
  price_credits: Schema.BigInt,
  authorized_units: Schema.BigInt,
  due_units: Schema.NullOr(Schema.BigInt),
  settled_units: Schema.NullOr(Schema.BigInt),
  status: PaymentStatus,
  payment_payload: Json,
  requirements: Json,
  valid_until: Schema.DateFromSelf,
  answer: Schema.NullOr(StoredAnswer),
  settlement: Schema.NullOr(Json),
  transaction: Schema.NullOr(Schema.String),
  failure: Schema.NullOr(Schema.String),
  created_at: Schema.DateFromSelf,
  outcome_at: Schema.NullOr(Schema.DateFromSelf),
  finished_at: Schema.NullOr(Schema.DateFromSelf),
  lease_until: Schema.DateFromSelf
})
export type PaymentRow = typeof PaymentRow.Type

/** A payment as first written: verified, its work about to start. */
export interface NewPayment {
  readonly id: string
  readonly kind: "call" | "purchase"
  readonly payer: string
  readonly paymentIdentifier: string | null
  readonly fingerprint: string
  readonly authorizationSha256: string
  readonly scheme: string
  readonly network: string
  readonly asset: string
  readonly payTo: string
  readonly subject: string
  readonly priceCredits: bigint
  readonly authorizedUnits: bigint
  readonly paymentPayload: unknown
  readonly requirements: unknown
  readonly validUntil: Date
  readonly createdAt: Date
  readonly leaseUntil: Date
}

/** Why a payment could not be opened: its identifier or its authorisation was used before. */
export type OpenRefusal =
  | { readonly _tag: "IdentifierUsed"; readonly row: PaymentRow }
  | { readonly _tag: "AuthorizationUsed" }

export class X402Repo extends Effect.Service<X402Repo>()("X402/X402Repo", {
  effect: Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient

    const findById = SqlSchema.findOne({
      Request: Schema.String,
      Result: PaymentRow,
      execute: (id) => sql`SELECT * FROM x402_payments WHERE id = ${id}`
    })
    const findByIdentifier = SqlSchema.findOne({
      Request: Schema.Struct({ payer: Schema.String, id: Schema.String }),
      Result: PaymentRow,
      execute: ({ id, payer }) => sql`SELECT * FROM x402_payments WHERE payer = ${payer} AND payment_identifier = ${id}`
    })

    const byId = (id: string) => findById(id).pipe(Effect.orDie)
    const byIdentifier = (payer: string, id: string) => findByIdentifier({ payer, id }).pipe(Effect.orDie)

    /**
     * Writes a verified payment, in one transaction under the payer's lock: the day's spend
     * checked against the cap first (what is settled, due, or authorised and still running),
     * then the row, unless its identifier or its authorisation is already used.
     */
    const open = (payment: NewPayment, dailyCap: Option.Option<bigint>, dayStart: Date) =>
      sql.withTransaction(Effect.gen(function*() {
        yield* sql`SELECT pg_advisory_xact_lock(hashtextextended(${`x402:${payment.payer}`}, 0))`
        if (Option.isSome(dailyCap)) {
          const [spent] = yield* sql<{ units: string }>`
            SELECT COALESCE(SUM(CASE status
              WHEN 'settled' THEN settled_units
              WHEN 'due' THEN due_units
              WHEN 'running' THEN authorized_units
              ELSE 0 END), 0)::text AS units
            FROM x402_payments WHERE payer = ${payment.payer} AND created_at >= ${dayStart}`
          const units = BigInt(spent?.units ?? "0")
          if (units + payment.authorizedUnits > dailyCap.value) {
            return yield* new PayerSpendCap({
              message: `${payment.payer} has spent ${units} of its ${dailyCap.value} units today; ` +
                `this payment of ${payment.authorizedUnits} would pass the cap (resets 00:00 UTC)`
            })
          }
        }
        const inserted = yield* sql<{ id: string }>`
          INSERT INTO x402_payments (id, kind, payer, payment_identifier, fingerprint, authorization_sha256, scheme,
            network, asset, pay_to, subject, price_credits, authorized_units, status, payment_payload, requirements,
            valid_until, created_at, lease_until)
          VALUES (${payment.id}, ${payment.kind}, ${payment.payer}, ${payment.paymentIdentifier},
            ${payment.fingerprint}, ${payment.authorizationSha256}, ${payment.scheme}, ${payment.network},
            ${payment.asset}, ${payment.payTo}, ${payment.subject}, ${payment.priceCredits.toString()},
            ${payment.authorizedUnits.toString()}, 'running', ${JSON.stringify(payment.paymentPayload)}::jsonb,
            ${JSON.stringify(payment.requirements)}::jsonb, ${payment.validUntil}, ${payment.createdAt},
            ${payment.leaseUntil})
          ON CONFLICT DO NOTHING
          RETURNING id`
        if (inserted.length > 0) return Option.none<OpenRefusal>()
        if (payment.paymentIdentifier !== null) {
          const used = yield* findByIdentifier({ payer: payment.payer, id: payment.paymentIdentifier })
          if (Option.isSome(used)) return Option.some<OpenRefusal>({ _tag: "IdentifierUsed", row: used.value })
        }
        return Option.some<OpenRefusal>({ _tag: "AuthorizationUsed" })
      })).pipe(Effect.catchTags({ SqlError: Effect.die, ParseError: Effect.die }))

    /** The outcome of the work, with the answer to give (and give again), before any settlement. */
    const recordOutcome = (
      id: string,
      outcome: {
        readonly dueUnits: bigint
        readonly answer: StoredAnswer
        readonly at: Date
        readonly leaseUntil: Date
      }
    ) =>
      sql`
        UPDATE x402_payments
        SET status = ${outcome.dueUnits > 0n ? "due" : "nothing_due"}, due_units = ${outcome.dueUnits.toString()},
          answer = ${JSON.stringify(outcome.answer)}::jsonb, outcome_at = ${outcome.at},
          finished_at = ${outcome.dueUnits > 0n ? null : outcome.at}, lease_until = ${outcome.leaseUntil}
        WHERE id = ${id} AND status = 'running'`.pipe(Effect.asVoid, Effect.orDie)

    /** Settled: what was, with the facilitator's answer. Only a due payment becomes settled, once. */
    const markSettled = (id: string, settled: bigint, settlement: unknown, transaction: string | null, at: Date) =>
      sql<{ id: string }>`
        UPDATE x402_payments
        SET status = 'settled', settled_units = ${settled.toString()}, settlement = ${
        JSON.stringify(settlement)
      }::jsonb,
          transaction = ${transaction}, finished_at = ${at}
        WHERE id = ${id} AND status IN ('due', 'nothing_due')
        RETURNING id`.pipe(Effect.map((rows) => rows.length > 0), Effect.orDie)

    /** Ends a payment without settling it (abandoned by the sweeper's rule, or refused by the facilitator). */
    const markUnsettled = (
      id: string,
      status: "abandoned" | "refused",
      failure: string,
      at: Date,
      from: ReadonlyArray<"running" | "due"> = ["running", "due"]
    ) =>
      sql`
        UPDATE x402_payments SET status = ${status}, failure = ${failure}, finished_at = ${at}
        WHERE id = ${id} AND status IN ${sql.in(from)}`.pipe(Effect.asVoid, Effect.orDie)

    const takeLapsed = SqlSchema.findAll({
      Request: Schema.Struct({ now: Schema.DateFromSelf, leaseUntil: Schema.DateFromSelf, limit: Schema.Number }),
      Result: PaymentRow,
      execute: ({ leaseUntil, limit, now }) =>
        sql`
          UPDATE x402_payments SET lease_until = ${leaseUntil}
          WHERE id IN (
            SELECT id FROM x402_payments
            WHERE status IN ('running', 'due') AND lease_until < ${now}
            ORDER BY lease_until
            LIMIT ${limit}
            FOR UPDATE SKIP LOCKED)
          RETURNING *`
    })
    /** Payments whose lease lapsed (their process died or gave up), taken for the sweeper until `leaseUntil`. */
    const lapsed = (now: Date, leaseUntil: Date, limit: number) =>
      takeLapsed({ now, leaseUntil, limit }).pipe(Effect.orDie)

    const listRows = SqlSchema.findAll({
      Request: Schema.Struct({
        from: Schema.DateFromSelf,
        until: Schema.DateFromSelf,
        limit: Schema.Number,
        payer: Schema.NullOr(Schema.String)
      }),
      Result: PaymentRow,
      execute: ({ from, limit, payer, until }) =>
        sql`
          SELECT * FROM x402_payments
          WHERE created_at >= ${from} AND created_at < ${until}
            ${payer === null ? sql`` : sql`AND payer = ${payer}`}
          ORDER BY created_at DESC, id DESC
          LIMIT ${limit}`
    })
    /** Payments of a range of time, newest first, optionally of one payer. */
    const list = (range: { from: Date; until: Date }, limit: number, payer: string | null) =>
      listRows({ ...range, limit, payer }).pipe(Effect.orDie)

    const revenueRows = SqlSchema.findAll({
      Request: Schema.Struct({ from: Schema.DateFromSelf, until: Schema.DateFromSelf }),
      Result: Schema.Struct({
        day: Schema.String,
        kind: Schema.Literal("call", "purchase"),
        payments: Schema.Number,
        settled_units: Schema.BigInt,
        payers: Schema.Number
      }),
      execute: ({ from, until }) =>
        sql`
          SELECT to_char(created_at AT TIME ZONE 'UTC', 'YYYY-MM-DD') AS day, kind,
            count(*)::int AS payments, COALESCE(SUM(settled_units), 0)::text AS settled_units,
            count(DISTINCT payer)::int AS payers
          FROM x402_payments
          WHERE status = 'settled' AND created_at >= ${from} AND created_at < ${until}
          GROUP BY 1, 2
          ORDER BY 1, 2`
    })
    /** Settled revenue per UTC day and kind. */
    const revenue = (range: { from: Date; until: Date }) => revenueRows(range).pipe(Effect.orDie)

    return {
      byId,
      byIdentifier,
      open,
      recordOutcome,
      markSettled,
      markUnsettled,
      lapsed,
      list,
      revenue
    } as const
  })
}) {}
