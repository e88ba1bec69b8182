import { SqlClient, SqlSchema } from "@effect/sql"
import { Effect, Option, Schema } from "effect"
import { BillingProfile } from "../../Domain/BillingProfile.js"
import { OrgId, type PaymentId } from "../../Domain/Ids.js"
import { Payment } from "../../Domain/Payment.js"
import { OrgsRepo } from "../Orgs/OrgsRepo.js"
import { statementRows } from "../StatementRows.js"

/**
 * Billing's SQL: payments (`Payment`), the per-org billing profile (`BillingProfile`: saved
 * card, auto-reload, plan period), founding-offer claims and handled webhook event ids. Rows
 * are decoded by their records: money (minor units and credits) as bigint, timestamps as Dates.
 */

/** A column as a partial update writes it: credits and minor units as their decimal text. */
type Written<A> = A extends bigint ? string : A

/** The columns of a row that change after it is made (any subset), always with the time of the change. */
type ChangesOf<Row, Fixed extends keyof Row> =
  & { readonly [K in Exclude<keyof Row, Fixed | "updated_at">]?: Written<Row[K]> }
  & { readonly updated_at: Date }

/** What may change on a payment: its state, the provider's answers, money returned or disputed. */
export type PaymentChanges = ChangesOf<
  Payment,
  | "id"
  | "org_id"
  | "purpose"
  | "provider"
  | "provider_idempotency_key"
  | "currency"
  | "amount_minor"
  | "usd_cents"
  | "credits"
  | "created_by"
  | "created_at"
>

/** What may change on an org's billing profile: the saved card, auto-reload, the plan period. */
export type ProfileChanges = ChangesOf<BillingProfile, "org_id">

const OrgIdText = Schema.String
const Used = Schema.Struct({ used: Schema.BigInt })
const OrgSince = Schema.Struct({ orgId: Schema.String, since: Schema.DateFromSelf })

/** A new payment, as `Payment.insert` writes it. */
export type NewPayment = typeof Payment.insert.Type

/** A USD charge of a saved card that we start ourselves (auto-reload, plan renewal). */
export const offSessionPayment = (input: {
  readonly id: PaymentId
  readonly orgId: OrgId
  readonly purpose: "auto_reload" | "plan"
  readonly provider: "stripe" | "sandbox"
  readonly providerIdempotencyKey: string
  readonly cents: bigint
  readonly credits: bigint
  readonly plan: "pro" | "max" | null
  readonly offer: string | null
  readonly at: Date
}): NewPayment => ({
  id: input.id,
  org_id: input.orgId,
  purpose: input.purpose,
  provider: input.provider,
  provider_idempotency_key: input.providerIdempotencyKey,
  status: "creating",
  currency: "usd",
  amount_minor: input.cents,
  usd_cents: input.cents,
  credits: input.credits,
  fx_rate: null,
  fx_rate_date: null,
  plan: input.plan,
  offer: input.offer,
  save_card: false,
  checkout: false,
  idempotency_key: null,
  fingerprint: null,
  created_by: null,
  created_at: input.at,
  updated_at: input.at
})

export class BillingRepo extends Effect.Service<BillingRepo>()("Billing/BillingRepo", {
  dependencies: [OrgsRepo.Default],
  effect: Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const orgs = yield* OrgsRepo
    const takenRows = statementRows(Schema.Struct({ taken: Schema.Number }))

    // -- payments ----------------------------------------------------------------------------

    const insertRow = SqlSchema.findOne({
      Request: Payment.insert,
      Result: Payment,
      execute: (row) => sql`INSERT INTO payments ${sql.insert(row)} ON CONFLICT DO NOTHING RETURNING *`
    })
    /** Writes a new payment (`creating`); none when the org already used the idempotency key. */
    const insertPayment = (row: NewPayment) => insertRow(row).pipe(Effect.catchTag("ParseError", Effect.die))

    const findPaymentRow = SqlSchema.findOne({
      Request: Schema.Struct({ orgId: OrgIdText, id: Schema.String }),
      Result: Payment,
      execute: ({ id, orgId }) => sql`SELECT * FROM payments WHERE id = ${id} AND org_id = ${orgId}`
    })
    const findPayment = (orgId: OrgId, id: PaymentId) => findPaymentRow({ orgId, id }).pipe(Effect.orDie)

    const findByKeyRow = SqlSchema.findOne({
      Request: Schema.Struct({ orgId: OrgIdText, key: Schema.String }),
      Result: Payment,
      execute: ({ key, orgId }) => sql`SELECT * FROM payments WHERE org_id = ${orgId} AND idempotency_key = ${key}`
    })
    const findByKey = (orgId: string, key: string) => findByKeyRow({ orgId, key }).pipe(Effect.orDie)

    const lockPaymentRow = SqlSchema.findOne({
      Request: Schema.Struct({ ourId: Schema.NullOr(Schema.String), providerId: Schema.String }),
      Result: Payment,
      execute: ({ ourId, providerId }) =>
        sql`
          SELECT * FROM payments
          WHERE ${ourId === null ? sql`false` : sql`id = ${ourId}`} OR provider_payment_id = ${providerId}
          ORDER BY (provider_payment_id = ${providerId}) DESC
          LIMIT 1
          FOR UPDATE`
    })
    /** Locks a payment by our id or by the provider's, for one state change. */
    const lockPayment = (ourId: string | null, providerId: string) =>
      lockPaymentRow({ ourId, providerId }).pipe(Effect.catchTag("ParseError", Effect.die))

    const setProviderId = (id: string, providerId: string, now: Date) =>
      sql`
        UPDATE payments SET provider_payment_id = ${providerId},
          status = CASE WHEN status = 'creating' THEN 'pending' ELSE status END, updated_at = ${now}
        WHERE id = ${id} AND (provider_payment_id IS NULL OR provider_payment_id = ${providerId})`.pipe(Effect.asVoid)

    /** Records the checkout session made for a `creating` payment, which is then waiting for the customer. */
    const setCheckoutSession = (id: string, sessionId: string, now: Date) =>
      sql`
        UPDATE payments SET checkout_session_id = ${sessionId},
          status = CASE WHEN status = 'creating' THEN 'pending' ELSE status END, updated_at = ${now}
        WHERE id = ${id} AND (checkout_session_id IS NULL OR checkout_session_id = ${sessionId})`.pipe(Effect.asVoid)

    const lockByIdRow = SqlSchema.findOne({
      Request: Schema.String,
      Result: Payment,
      execute: (id) => sql`SELECT * FROM payments WHERE id = ${id} FOR UPDATE`
    })
    /** Locks a payment by our id alone (a checkout session that ended before any provider payment). */
    const lockPaymentById = (id: PaymentId) => lockByIdRow(id).pipe(Effect.orDie)

    const deletePayment = (id: string) =>
      Effect.zipRight(releaseOfferSeat(id), sql`DELETE FROM payments WHERE id = ${id} AND status = 'creating'`).pipe(
        Effect.asVoid
      )

    // -- founding offer ----------------------------------------------------------------------

    /** Seats of the founding offer reserved or taken. */
    const offerSeatsTaken = takenRows.single(sql`SELECT count(*)::int AS taken FROM founding_offer_claims`).pipe(
      Effect.map((row) => row.taken),
      Effect.orDie
    )

    const findOfferClaim = SqlSchema.findOne({
      Request: OrgIdText,
      Result: Schema.Struct({ status: Schema.Literal("reserved", "taken") }),
      execute: (orgId) => sql`SELECT status FROM founding_offer_claims WHERE org_id = ${orgId}`
    })
    /** The org's claim on the founding offer (one per org), if any. */
    const offerClaimOf = (orgId: string) =>
      findOfferClaim(orgId).pipe(Effect.map(Option.map((row) => row.status)), Effect.orDie)

    /** One reservation of a founding seat at a time, so the seats are never oversold. */
    const lockOffer = sql`SELECT pg_advisory_xact_lock(hashtextextended('founding_offer', 0))`.pipe(Effect.asVoid)

    /** A seat held for a plan payment until it is paid (taken) or ends unpaid (released). */
    const reserveOfferSeat = (orgId: string, paymentId: string, at: Date) =>
      sql`
        INSERT INTO founding_offer_claims (org_id, payment_id, status, created_at)
        VALUES (${orgId}, ${paymentId}, 'reserved', ${at})`.pipe(Effect.asVoid)

    const takeOfferSeat = (orgId: string, paymentId: string, at: Date) =>
      sql`
        UPDATE founding_offer_claims SET status = 'taken', taken_at = ${at}
        WHERE org_id = ${orgId} AND payment_id = ${paymentId}`.pipe(Effect.asVoid)

    const releaseOfferSeat = (paymentId: string) =>
      sql`DELETE FROM founding_offer_claims WHERE payment_id = ${paymentId} AND status = 'reserved'`.pipe(Effect.asVoid)

    const updatePayment = (id: string, changes: PaymentChanges) =>
      sql`UPDATE payments SET ${sql.update(changes)} WHERE id = ${id}`.pipe(Effect.asVoid)

    /** The org's payments, newest first. */
    const listPage = SqlSchema.findAll({
      Request: Schema.Struct({
        orgId: OrgIdText,
        limit: Schema.Number,
        before: Schema.NullOr(Schema.Struct({ created_at: Schema.DateFromSelf, id: Schema.String }))
      }),
      Result: Payment,
      execute: ({ before, limit, orgId }) =>
        sql`
          SELECT * FROM payments
          WHERE org_id = ${orgId}
            ${before === null ? sql`` : sql`AND (created_at, id) < (${before.created_at}, ${before.id})`}
          ORDER BY created_at DESC, id DESC
          LIMIT ${limit + 1}`
    })
    const listPayments = (orgId: string, limit: number, before: Payment | null) =>
      listPage({ orgId, limit, before: before === null ? null : { created_at: before.created_at, id: before.id } })
        .pipe(Effect.orDie)

    /**
     * Credits counted against the new-account cap: every top-up and auto-reload that has
     * not ended unpaid (in flight ones too, so two at once cannot pass the cap together).
     */
    const sumCapUsed = SqlSchema.single({
      Request: OrgIdText,
      Result: Used,
      execute: (orgId) =>
        sql`
          SELECT COALESCE(SUM(credits), 0)::text AS used FROM payments
          WHERE org_id = ${orgId} AND purpose IN ('top_up', 'auto_reload') AND status <> 'canceled'
            AND NOT (status = 'failed' AND purpose = 'auto_reload')`
    })
    const capUsed = (orgId: string) => sumCapUsed(orgId).pipe(Effect.map((row) => row.used), Effect.orDie)

    const sumAutoReloaded = SqlSchema.single({
      Request: OrgSince,
      Result: Used,
      execute: ({ orgId, since }) =>
        sql`
          SELECT COALESCE(SUM(credits), 0)::text AS used FROM payments
          WHERE org_id = ${orgId} AND purpose = 'auto_reload' AND status IN ('creating', 'pending', 'succeeded')
            AND created_at >= ${since}`
    })
    /** Auto-reload credits of the calendar month starting at `monthStart`, paid or in flight. */
    const autoReloadedSince = (orgId: string, monthStart: Date) =>
      sumAutoReloaded({ orgId, since: monthStart }).pipe(Effect.map((row) => row.used), Effect.orDie)

    const findOpenBefore = SqlSchema.findAll({
      Request: Schema.Struct({ cutoff: Schema.DateFromSelf, limit: Schema.Number }),
      Result: Payment,
      execute: ({ cutoff, limit }) =>
        sql`
          SELECT * FROM payments WHERE status IN ('creating', 'pending', 'failed') AND created_at < ${cutoff}
          ORDER BY created_at LIMIT ${limit}`
    })
    /** Payments not paid within their time (or left `creating` by a crash). */
    const openPaymentsBefore = (cutoff: Date, limit: number) => findOpenBefore({ cutoff, limit }).pipe(Effect.orDie)

    // -- profiles ----------------------------------------------------------------------------

    const ensureProfile = (orgId: string, now: Date) =>
      sql`INSERT INTO billing_profiles (org_id, updated_at) VALUES (${orgId}, ${now}) ON CONFLICT (org_id) DO NOTHING`
        .pipe(
          Effect.asVoid
        )

    const lockedProfile = SqlSchema.single({
      Request: OrgIdText,
      Result: BillingProfile,
      execute: (orgId) => sql`SELECT * FROM billing_profiles WHERE org_id = ${orgId} FOR UPDATE`
    })
    const lockProfile = (orgId: string, now: Date) =>
      Effect.zipRight(ensureProfile(orgId, now), lockedProfile(orgId)).pipe(
        Effect.catchTags({ ParseError: Effect.die, NoSuchElementException: Effect.die })
      )

    const setCustomer = SqlSchema.single({
      Request: Schema.Struct({ orgId: OrgIdText, customerId: Schema.String, at: Schema.DateFromSelf }),
      Result: Schema.Struct({ customer_id: Schema.String }),
      execute: ({ at, customerId, orgId }) =>
        sql`
          UPDATE billing_profiles SET customer_id = COALESCE(customer_id, ${customerId}), updated_at = ${at}
          WHERE org_id = ${orgId} RETURNING customer_id`
    })
    /** Records the org's provider customer unless it has one; answers the one it keeps. */
    const keepCustomer = (orgId: string, customerId: string, at: Date) =>
      setCustomer({ orgId, customerId, at }).pipe(Effect.map((row) => row.customer_id), Effect.orDie)

    const findProfile = SqlSchema.findOne({
      Request: OrgIdText,
      Result: BillingProfile,
      execute: (orgId) => sql`SELECT * FROM billing_profiles WHERE org_id = ${orgId}`
    })
    const profile = (orgId: string) => findProfile(orgId).pipe(Effect.orDie)

    const lockAutoReloading = SqlSchema.findOne({
      Request: OrgIdText,
      Result: BillingProfile,
      execute: (orgId) =>
        sql`SELECT * FROM billing_profiles WHERE org_id = ${orgId} AND auto_reload_enabled FOR UPDATE SKIP LOCKED`
    })
    /** Locks a profile with auto-reload on, unless another replica is charging it now. */
    const lockAutoReloadProfile = (orgId: string) => lockAutoReloading(orgId).pipe(Effect.orDie)

    const findCandidates = SqlSchema.findAll({
      Request: Schema.DateFromSelf,
      Result: Schema.Struct({ org_id: OrgId }),
      // Joins the ledger's balance rows to read only orgs under their threshold.
      execute: (at) =>
        sql`
          SELECT p.org_id FROM billing_profiles p JOIN org_balances b ON b.org_id = p.org_id
          WHERE p.auto_reload_enabled AND p.card_payment_method_id IS NOT NULL AND NOT b.frozen
            AND b.balance < p.auto_reload_threshold_credits
            AND (p.auto_reload_next_attempt_at IS NULL OR p.auto_reload_next_attempt_at <= ${at})
            AND NOT EXISTS (SELECT 1 FROM payments x WHERE x.org_id = p.org_id AND x.purpose = 'auto_reload'
                            AND x.status IN ('creating', 'pending'))
          LIMIT 100`
    })
    /** Orgs that may need an auto-reload now (a cheap read; each is checked again under its lock). */
    const autoReloadCandidates = (at: Date) =>
      findCandidates(at).pipe(Effect.map((rows) => rows.map((r) => r.org_id)), Effect.orDie)

    const updateProfile = (orgId: string, changes: ProfileChanges) =>
      sql`UPDATE billing_profiles SET ${sql.update(changes)} WHERE org_id = ${orgId}`.pipe(Effect.asVoid)

    // -- webhook events ------------------------------------------------------------------------

    /** Records a handled event id; false when it was handled before (or is being handled now). */
    const recordEvent = (eventId: string, type: string, now: Date) =>
      sql`
        INSERT INTO payment_webhook_events (event_id, type, received_at) VALUES (${eventId}, ${type}, ${now})
        ON CONFLICT (event_id) DO NOTHING
        RETURNING 1 AS one`.pipe(Effect.map((rows) => rows.length > 0))

    const eventSeen = (eventId: string) =>
      sql`SELECT 1 AS one FROM payment_webhook_events WHERE event_id = ${eventId}`.pipe(
        Effect.map((rows) => rows.length > 0),
        Effect.orDie
      )

    // -- disputes ----------------------------------------------------------------------------

    const liftable = SqlSchema.single({
      Request: OrgIdText,
      Result: Schema.Struct({ liftable: Schema.Boolean }),
      execute: (orgId) =>
        sql`
          SELECT
            NOT EXISTS (SELECT 1 FROM payments WHERE org_id = ${orgId} AND dispute_status IN ('open', 'lost'))
            AND COALESCE((
              SELECT action = 'org.unfreeze_credits' FROM admin_audit
              WHERE target_type = 'org' AND target_id = ${orgId}
                AND action IN ('org.freeze_credits', 'org.unfreeze_credits')
              ORDER BY created_at DESC, id DESC LIMIT 1), true) AS liftable`
    })
    /**
     * Whether nothing but disputes holds the org's credits frozen: no dispute of the org is
     * open or lost, the org is not closed, and an administrator's last word on its freeze
     * (the audit log) was not a freeze.
     */
    const disputeFreezeLiftable = (orgId: string) =>
      Effect.zipWith(
        liftable(orgId).pipe(Effect.map((row) => row.liftable), Effect.orDie),
        orgs.isOpen(orgId),
        (liftable, open) => liftable && open
      )

    // -- owners ------------------------------------------------------------------------------

    /** The org as OrgsRepo reads it. */
    const org = (orgId: OrgId) => orgs.org(orgId)

    const findOrgOfCustomer = SqlSchema.findOne({
      Request: Schema.String,
      Result: Schema.Struct({ org_id: OrgId }),
      execute: (customerId) => sql`SELECT org_id FROM billing_profiles WHERE customer_id = ${customerId}`
    })
    /** The org whose provider customer this is, if any. */
    const orgOfCustomer = (customerId: string) =>
      findOrgOfCustomer(customerId).pipe(Effect.map(Option.map((row) => row.org_id)), Effect.orDie)

    const findOrgOfCard = SqlSchema.findOne({
      Request: Schema.String,
      Result: Schema.Struct({ org_id: OrgId }),
      execute: (paymentMethodId) =>
        sql`SELECT org_id FROM billing_profiles WHERE card_payment_method_id = ${paymentMethodId}`
    })
    /** The org whose saved card this provider payment method is, if any. */
    const orgOfCard = (paymentMethodId: string) =>
      findOrgOfCard(paymentMethodId).pipe(Effect.map(Option.map((row) => row.org_id)), Effect.orDie)

    return {
      insertPayment,
      findPayment,
      findByKey,
      lockPayment,
      setProviderId,
      setCheckoutSession,
      lockPaymentById,
      deletePayment,
      offerSeatsTaken,
      offerClaimOf,
      lockOffer,
      reserveOfferSeat,
      takeOfferSeat,
      releaseOfferSeat,
      updatePayment,
      listPayments,
      capUsed,
      autoReloadedSince,
      openPaymentsBefore,
      ensureProfile,
      lockProfile,
      profile,
      lockAutoReloadProfile,
      keepCustomer,
      autoReloadCandidates,
      updateProfile,
      recordEvent,
      eventSeen,
      disputeFreezeLiftable,
      org,
      orgOfCustomer,
      orgOfCard
    } as const
  })
}) {}
