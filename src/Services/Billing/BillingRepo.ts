import { SqlClient } from "@effect/sql"
import { Effect, Option } from "effect"
import { isUuid } from "../../Domain/Ids.js"

/**
 * Billing's SQL: payments, the per-org billing profile (saved card, auto-reload, plan
 * period), founding-offer claims and handled webhook event ids. Money columns come back as
 * strings of digits.
 */
export type PaymentPurpose = "top_up" | "auto_reload" | "plan"
export type PaymentStatus = "creating" | "pending" | "succeeded" | "failed" | "canceled"

export interface PaymentRow {
  readonly id: string
  readonly org_id: string
  readonly purpose: PaymentPurpose
  readonly provider: "stripe" | "sandbox"
  readonly provider_payment_id: string | null
  readonly provider_idempotency_key: string
  readonly status: PaymentStatus
  readonly currency: "usd" | "inr"
  readonly amount_minor: string
  readonly usd_cents: string
  readonly credits: string
  readonly fx_rate: string | null
  readonly fx_rate_date: string | Date | null
  readonly plan: "pro" | "max" | null
  readonly offer: string | null
  readonly save_card: boolean
  readonly idempotency_key: string | null
  readonly fingerprint: string | null
  readonly failure_message: string | null
  readonly receipt_url: string | null
  readonly card_brand: string | null
  readonly card_last4: string | null
  readonly refunded_minor: string
  readonly disputed_minor: string
  readonly reversed_credits: string
  readonly credited_at: Date | null
  readonly created_by: string | null
  readonly created_at: Date
  readonly updated_at: Date
}

export interface ProfileRow {
  readonly org_id: string
  readonly customer_id: string | null
  readonly card_payment_method_id: string | null
  readonly card_brand: string | null
  readonly card_last4: string | null
  readonly card_exp_month: number | null
  readonly card_exp_year: number | null
  readonly auto_reload_enabled: boolean
  readonly auto_reload_threshold_credits: string | null
  readonly auto_reload_amount_credits: string | null
  readonly auto_reload_monthly_limit_credits: string | null
  readonly auto_reload_failures: number
  readonly auto_reload_next_attempt_at: Date | null
  readonly auto_reload_disabled_reason: string | null
  readonly plan_period_end: Date | null
  readonly plan_founding: boolean
}

export interface NewPayment {
  readonly id: string
  readonly org_id: string
  readonly purpose: PaymentPurpose
  readonly provider: "stripe" | "sandbox"
  readonly provider_idempotency_key: string
  readonly currency: "usd" | "inr"
  readonly amount_minor: string
  readonly usd_cents: string
  readonly credits: string
  readonly fx_rate: string | null
  readonly fx_rate_date: string | null
  readonly plan: "pro" | "max" | null
  readonly offer: string | null
  readonly save_card: boolean
  readonly idempotency_key: string | null
  readonly fingerprint: string | null
  readonly created_by: string | null
  readonly created_at: Date
  readonly updated_at: Date
}

/** A USD charge of a saved card that we start ourselves (auto-reload, plan renewal). */
export const offSessionPayment = (input: {
  readonly id: string
  readonly orgId: string
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
  currency: "usd",
  amount_minor: input.cents.toString(),
  usd_cents: input.cents.toString(),
  credits: input.credits.toString(),
  fx_rate: null,
  fx_rate_date: null,
  plan: input.plan,
  offer: input.offer,
  save_card: false,
  idempotency_key: null,
  fingerprint: null,
  created_by: null,
  created_at: input.at,
  updated_at: input.at
})

const first = <A>(rows: ReadonlyArray<A>) => Option.fromNullable(rows[0])

export class BillingRepo extends Effect.Service<BillingRepo>()("Billing/BillingRepo", {
  effect: Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient

    // -- payments ----------------------------------------------------------------------------

    /** Writes a new payment; none when the org already used the idempotency key. */
    const insertPayment = (row: NewPayment) =>
      sql<PaymentRow>`
        INSERT INTO payments ${sql.insert({ ...row, status: "creating" })}
        ON CONFLICT DO NOTHING
        RETURNING *`.pipe(Effect.map(first))

    // Identifiers come from paths: one that is not a UUID is simply not found.
    const findPayment = (orgId: string, id: string) =>
      !isUuid(id)
        ? Effect.succeed(Option.none<PaymentRow>())
        : sql<PaymentRow>`SELECT * FROM payments WHERE id = ${id} AND org_id = ${orgId}`.pipe(
          Effect.map(first),
          Effect.orDie
        )

    const findByKey = (orgId: string, key: string) =>
      sql<PaymentRow>`SELECT * FROM payments WHERE org_id = ${orgId} AND idempotency_key = ${key}`.pipe(
        Effect.map(first),
        Effect.orDie
      )

    /** Locks a payment by our id or by the provider's, for one state change. */
    const lockPayment = (ourId: string | null, providerId: string) =>
      sql<PaymentRow>`
        SELECT * FROM payments
        WHERE ${ourId === null ? sql`false` : sql`id = ${ourId}`} OR provider_payment_id = ${providerId}
        ORDER BY (provider_payment_id = ${providerId}) DESC
        LIMIT 1
        FOR UPDATE`.pipe(Effect.map(first))

    const setProviderId = (id: string, providerId: string, now: Date) =>
      sql`
        UPDATE payments SET provider_payment_id = ${providerId},
          status = CASE WHEN status = 'creating' THEN 'pending' ELSE status END, updated_at = ${now}
        WHERE id = ${id} AND (provider_payment_id IS NULL OR provider_payment_id = ${providerId})`.pipe(Effect.asVoid)

    const deletePayment = (id: string) =>
      Effect.zipRight(
        sql`DELETE FROM founding_offer_claims WHERE payment_id = ${id} AND status = 'reserved'`,
        sql`DELETE FROM payments WHERE id = ${id} AND status = 'creating'`
      ).pipe(Effect.asVoid)

    const updatePayment = (id: string, fields: Record<string, unknown>) =>
      sql`UPDATE payments SET ${sql.update(fields)} WHERE id = ${id}`.pipe(Effect.asVoid)

    /** The org's payments, newest first. */
    const listPayments = (orgId: string, limit: number, before: PaymentRow | null) =>
      sql<PaymentRow>`
        SELECT * FROM payments
        WHERE org_id = ${orgId}
          ${before === null ? sql`` : sql`AND (created_at, id) < (${before.created_at}, ${before.id})`}
        ORDER BY created_at DESC, id DESC
        LIMIT ${limit + 1}`.pipe(Effect.orDie)

    /**
     * Credits counted against the new-account cap: every top-up and auto-reload that has
     * not ended unpaid (in flight ones too, so two at once cannot pass the cap together).
     */
    const capUsed = (orgId: string) =>
      sql<{ used: string }>`
        SELECT COALESCE(SUM(credits), 0)::text AS used FROM payments
        WHERE org_id = ${orgId} AND purpose IN ('top_up', 'auto_reload') AND status <> 'canceled'
          AND NOT (status = 'failed' AND purpose = 'auto_reload')`.pipe(
        Effect.map((rows) => BigInt(rows[0]!.used)),
        Effect.orDie
      )

    /** Auto-reload credits of the calendar month starting at `monthStart`, paid or in flight. */
    const autoReloadedSince = (orgId: string, monthStart: Date) =>
      sql<{ used: string }>`
        SELECT COALESCE(SUM(credits), 0)::text AS used FROM payments
        WHERE org_id = ${orgId} AND purpose = 'auto_reload' AND status IN ('creating', 'pending', 'succeeded')
          AND created_at >= ${monthStart}`.pipe(Effect.map((rows) => BigInt(rows[0]!.used)), Effect.orDie)

    /** Payments not paid within their time (or left `creating` by a crash). */
    const openPaymentsBefore = (cutoff: Date, limit: number) =>
      sql<PaymentRow>`
        SELECT * FROM payments WHERE status IN ('creating', 'pending', 'failed') AND created_at < ${cutoff}
        ORDER BY created_at LIMIT ${limit}`.pipe(Effect.orDie)

    // -- profiles ----------------------------------------------------------------------------

    const ensureProfile = (orgId: string, now: Date) =>
      sql`INSERT INTO billing_profiles (org_id, updated_at) VALUES (${orgId}, ${now}) ON CONFLICT (org_id) DO NOTHING`
        .pipe(
          Effect.asVoid
        )

    const lockProfile = (orgId: string, now: Date) =>
      Effect.zipRight(
        ensureProfile(orgId, now),
        sql<ProfileRow>`SELECT * FROM billing_profiles WHERE org_id = ${orgId} FOR UPDATE`.pipe(
          Effect.map((rows) => rows[0]!)
        )
      )

    const profile = (orgId: string) =>
      sql<ProfileRow>`SELECT * FROM billing_profiles WHERE org_id = ${orgId}`.pipe(Effect.map(first), Effect.orDie)

    const updateProfile = (orgId: string, fields: Record<string, unknown>) =>
      sql`UPDATE billing_profiles SET ${sql.update(fields)} WHERE org_id = ${orgId}`.pipe(Effect.asVoid)

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

    // -- owners ------------------------------------------------------------------------------

    const owners = (orgId: string) =>
      sql<{ user_id: string; email: string; org_name: string }>`
        SELECT u.id AS user_id, u.email, o.name AS org_name
        FROM org_members m JOIN users u ON u.id = m.user_id JOIN orgs o ON o.id = m.org_id
        WHERE m.org_id = ${orgId} AND m.role = 'owner'
        ORDER BY u.email`

    const org = (orgId: string) =>
      !isUuid(orgId) ?
        Effect.succeed(Option.none()) :
        sql<{ id: string; name: string; plan: "payg" | "pro" | "max"; created_at: Date }>`
        SELECT id, name, plan, created_at FROM orgs WHERE id = ${orgId}`.pipe(Effect.map(first), Effect.orDie)

    return {
      insertPayment,
      findPayment,
      findByKey,
      lockPayment,
      setProviderId,
      deletePayment,
      updatePayment,
      listPayments,
      capUsed,
      autoReloadedSince,
      openPaymentsBefore,
      ensureProfile,
      lockProfile,
      profile,
      updateProfile,
      recordEvent,
      eventSeen,
      owners,
      org
    } as const
  })
}) {}
