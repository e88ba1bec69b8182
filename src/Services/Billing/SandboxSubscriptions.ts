import { SqlClient } from "@effect/sql"
import { Clock, Effect, Option, Schema } from "effect"
import { randomUUID } from "node:crypto"
import { NotFound } from "../../Errors/ApiErrors.js"
import { statementRows } from "../StatementRows.js"
import type {
  PaymentProvider,
  ProviderCardSetup,
  ProviderEvent,
  ProviderInvoice,
  ProviderSubscription
} from "./PaymentProvider.js"
import { behaviourOf, declineMessages } from "./SandboxCards.js"

/**
 * The development sandbox's plans, standing where Stripe Billing is in production: prices
 * by lookup key, subscriptions started on the sandbox's checkout page, their invoices, a
 * portal page, and renewals by the sandbox's own clock (the service's Clock): when a
 * subscription's month ends, `renewDue` charges its card and answers the invoice events
 * Stripe would have sent. The sandbox does not retry: a renewal its card refuses leaves the
 * subscription `unpaid`, as Stripe's does once its retries fail. A plan change charges the
 * difference for the rest of the month at once, prorated by the second as Stripe does.
 */
export const sandboxPortalPath = (sessionId: string) => `/v1/billing/sandbox/portal/${sessionId}`

/** The same instant one calendar month later (UTC), the day clamped to the month's end. */
export const addMonth = (from: Date): Date => {
  const year = from.getUTCFullYear()
  const month = from.getUTCMonth() + 1
  const lastDay = new Date(Date.UTC(year, month + 1, 0)).getUTCDate()
  return new Date(Date.UTC(
    year,
    month,
    Math.min(from.getUTCDate(), lastDay),
    from.getUTCHours(),
    from.getUTCMinutes(),
    from.getUTCSeconds(),
    from.getUTCMilliseconds()
  ))
}

/** The instant one calendar month earlier (a period's start from its end). */
const subtractMonth = (from: Date) => {
  const back = new Date(from)
  back.setUTCMonth(back.getUTCMonth() - 1)
  return back
}

const SubscriptionRow = Schema.Struct({
  id: Schema.String,
  customer_id: Schema.String,
  org_id: Schema.NullOr(Schema.String),
  our_payment_id: Schema.NullOr(Schema.String),
  price_id: Schema.String,
  payment_method_id: Schema.String,
  card_brand: Schema.String,
  card_last4: Schema.String,
  status: Schema.String,
  ended_because: Schema.NullOr(Schema.String),
  current_period_end: Schema.DateFromSelf,
  amount_minor: Schema.BigInt,
  latest_invoice_id: Schema.NullOr(Schema.String)
})
type SubscriptionRow = typeof SubscriptionRow.Type

const InvoiceRow = Schema.Struct({
  id: Schema.String,
  subscription_id: Schema.String,
  billing_reason: Schema.String,
  amount_minor: Schema.BigInt,
  status: Schema.Literal("open", "paid"),
  failure_message: Schema.NullOr(Schema.String)
})

const toSubscription = (row: SubscriptionRow): ProviderSubscription => ({
  id: row.id,
  status: row.status,
  customerId: row.customer_id,
  priceId: row.price_id,
  orgId: row.org_id,
  ourPaymentId: row.our_payment_id,
  currentPeriodEnd: row.current_period_end,
  endedBecause: row.ended_because === "payment_failed" || row.ended_because === "cancellation_requested"
    ? row.ended_because
    : null,
  paymentMethodId: row.payment_method_id,
  card: { brand: row.card_brand, last4: row.card_last4, expMonth: 12, expYear: 2099 },
  latestInvoiceId: row.latest_invoice_id
})

/** A card as the sandbox keeps it on a subscription. */
export interface SandboxCard {
  readonly paymentMethodId: string
  readonly brand: string
  readonly last4: string
}

export class SandboxSubscriptions extends Effect.Service<SandboxSubscriptions>()("Billing/SandboxSubscriptions", {
  effect: Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const subscriptionRows = statementRows(SubscriptionRow)
    const invoiceRows = statementRows(InvoiceRow)
    const amountRows = statementRows(Schema.Struct({ amount_minor: Schema.BigInt }))
    const now = Effect.map(Clock.currentTimeMillis, (ms) => new Date(ms))

    const selectSubscription = sql.unsafe(`
      SELECT s.id, s.customer_id, s.org_id, s.our_payment_id, s.price_id, s.payment_method_id, s.card_brand,
        s.card_last4, s.status, s.ended_because, s.current_period_end, p.amount_minor,
        (SELECT i.id FROM sandbox_invoices i WHERE i.subscription_id = s.id ORDER BY i.created_at DESC, i.id DESC LIMIT 1)
          AS latest_invoice_id
      FROM sandbox_subscriptions s JOIN sandbox_prices p ON p.id = s.price_id`)

    const find = (id: string) => subscriptionRows.one(sql`${selectSubscription} WHERE s.id = ${id}`).pipe(Effect.orDie)

    const require = (id: string) =>
      Effect.flatMap(find(id), (row) =>
        Option.match(row, {
          onNone: () => Effect.dieMessage(`No sandbox subscription ${id}`),
          onSome: Effect.succeed
        }))

    const priceAmount = (priceId: string) =>
      amountRows.one(sql`SELECT amount_minor FROM sandbox_prices WHERE id = ${priceId}`).pipe(
        Effect.orDie,
        Effect.flatMap(Option.match({
          onNone: () => Effect.dieMessage(`No sandbox price ${priceId}`),
          onSome: (row) => Effect.succeed(row.amount_minor)
        }))
      )

    /** Charges a card for an invoice: paid, or open with the card's reason. */
    const invoice = (subscriptionId: string, reason: string, amountMinor: bigint, paymentMethodId: string) =>
      Effect.gen(function*() {
        const behaviour = behaviourOf(paymentMethodId)
        const failure = behaviour === "succeeds" ? null : declineMessages[behaviour]
        const id = `in_sandbox_${randomUUID().replace(/-/g, "")}`
        yield* sql`
          INSERT INTO sandbox_invoices (id, subscription_id, billing_reason, amount_minor, status, failure_message, created_at)
          VALUES (${id}, ${subscriptionId}, ${reason}, ${amountMinor.toString()}, ${failure === null ? "paid" : "open"},
            ${failure}, ${yield* now})`.pipe(Effect.orDie)
        return { id, paid: failure === null, failure }
      })

    const planPrice: PaymentProvider["Type"]["planPrice"] = (spec) =>
      Effect.gen(function*() {
        const id = `price_sandbox_${spec.lookupKey}`
        yield* sql`
          INSERT INTO sandbox_prices (id, lookup_key, product_name, amount_minor)
          VALUES (${id}, ${spec.lookupKey}, ${spec.productName}, ${spec.amountMinor.toString()})
          ON CONFLICT (lookup_key) DO UPDATE SET amount_minor = EXCLUDED.amount_minor`.pipe(Effect.orDie)
        return id
      })

    /**
     * The customer paid a subscription's checkout with a card: its first month is charged;
     * answers the subscription, or the card's reason when it was refused.
     */
    const subscribe = (input: {
      readonly customerId: string
      readonly orgId: string | null
      readonly ourPaymentId: string | null
      readonly priceId: string
      readonly card: SandboxCard
    }) =>
      sql.withTransaction(Effect.gen(function*() {
        const behaviour = behaviourOf(input.card.paymentMethodId)
        // The customer is present at checkout: a card needing authentication gets it.
        if (behaviour === "declined" || behaviour === "insufficient_funds") {
          return { subscriptionId: null, failure: declineMessages[behaviour] }
        }
        const id = `sub_sandbox_${randomUUID().replace(/-/g, "")}`
        const at = yield* now
        yield* sql`
          INSERT INTO sandbox_subscriptions (id, customer_id, org_id, our_payment_id, price_id, payment_method_id, card_brand,
            card_last4, status, current_period_end, created_at)
          VALUES (${id}, ${input.customerId}, ${input.orgId}, ${input.ourPaymentId}, ${input.priceId},
            ${input.card.paymentMethodId}, ${input.card.brand}, ${input.card.last4}, 'active', ${addMonth(at)}, ${at})`
        yield* sql`
          INSERT INTO sandbox_invoices (id, subscription_id, billing_reason, amount_minor, status, created_at)
          VALUES (${`in_sandbox_${randomUUID().replace(/-/g, "")}`}, ${id}, 'subscription_create',
            ${(yield* priceAmount(input.priceId)).toString()}, 'paid', ${at})`
        return { subscriptionId: id, failure: null }
      })).pipe(Effect.orDie)

    const retrieveSubscription = (id: string) => Effect.map(require(id), toSubscription)

    const retrieveInvoice = (id: string) =>
      Effect.flatMap(
        invoiceRows.one(sql`
          SELECT id, subscription_id, billing_reason, amount_minor, status, failure_message
          FROM sandbox_invoices WHERE id = ${id}`).pipe(Effect.orDie),
        Option.match({
          onNone: () => Effect.dieMessage(`No sandbox invoice ${id}`),
          onSome: (row) =>
            Effect.succeed<ProviderInvoice>({
              id: row.id,
              status: row.status,
              subscriptionId: row.subscription_id,
              billingReason: row.billing_reason,
              amountDueMinor: row.amount_minor,
              currency: "usd",
              attempted: true,
              receiptUrl: null,
              failureMessage: row.failure_message
            })
        })
      )

    const changeSubscriptionPrice: PaymentProvider["Type"]["changeSubscriptionPrice"] = (request) =>
      sql.withTransaction(Effect.gen(function*() {
        const sub = yield* require(request.subscriptionId)
        if (sub.price_id === request.priceId || (sub.status !== "active" && sub.status !== "past_due")) {
          return toSubscription(sub)
        }
        const at = yield* now
        const end = sub.current_period_end.getTime()
        const start = subtractMonth(sub.current_period_end).getTime()
        const left = BigInt(Math.max(end - at.getTime(), 0))
        const difference = (yield* priceAmount(request.priceId)) - sub.amount_minor
        // Stripe's proration: the difference for the time left of the period, charged now when positive.
        const prorated = difference * left / BigInt(Math.max(end - start, 1))
        yield* sql`UPDATE sandbox_subscriptions SET price_id = ${request.priceId} WHERE id = ${sub.id}`
        if (prorated > 0n) {
          const charged = yield* invoice(sub.id, "subscription_update", prorated, sub.payment_method_id)
          if (!charged.paid) yield* sql`UPDATE sandbox_subscriptions SET status = 'past_due' WHERE id = ${sub.id}`
        }
        return toSubscription(yield* require(sub.id))
      })).pipe(Effect.orDie)

    const end = (id: string, because: "payment_failed" | "cancellation_requested", status: "canceled" | "unpaid") =>
      sql`
        UPDATE sandbox_subscriptions SET status = ${status}, ended_because = ${because}
        WHERE id = ${id} AND status IN ('active', 'past_due')`.pipe(Effect.orDie)

    const cancelSubscription = (id: string) =>
      Effect.zipRight(end(id, "cancellation_requested", "canceled"), retrieveSubscription(id))

    const createPortal = (customerId: string, returnUrl: string) =>
      Effect.gen(function*() {
        const id = `bps_sandbox_${randomUUID().replace(/-/g, "")}`
        yield* sql`
          INSERT INTO sandbox_portal_sessions (id, customer_id, return_url, created_at)
          VALUES (${id}, ${customerId}, ${returnUrl}, ${yield* now})`.pipe(Effect.orDie)
        return `${new URL(returnUrl).origin}${sandboxPortalPath(id)}`
      })

    /** The customer's card: the one its newest subscription is charged on. */
    const retrieveDefaultCard = (customerId: string) =>
      Effect.map(
        subscriptionRows.one(sql`
          ${selectSubscription} WHERE s.customer_id = ${customerId} ORDER BY s.created_at DESC LIMIT 1`).pipe(
          Effect.orDie
        ),
        (row): ProviderCardSetup =>
          Option.match(row, {
            onNone: () => ({ succeeded: false, customerId, paymentMethodId: null, card: null }),
            onSome: (sub) => ({
              succeeded: true,
              customerId,
              paymentMethodId: sub.payment_method_id,
              card: { brand: sub.card_brand, last4: sub.card_last4, expMonth: 12, expYear: 2099 }
            })
          })
      )

    /**
     * Subscriptions whose month ended, renewed on their card (one replica at a time each);
     * answers the invoice events. A refused renewal leaves the subscription `unpaid`.
     */
    const renewDue = Effect.gen(function*() {
      const at = yield* now
      const events: Array<ProviderEvent> = []
      const due = yield* subscriptionRows.all(sql`
        ${selectSubscription} WHERE s.status = 'active' AND s.current_period_end <= ${at} LIMIT 100`).pipe(Effect.orDie)
      for (const sub of due) {
        const renewed = yield* sql.withTransaction(Effect.gen(function*() {
          // Moving the period first is the claim: another replica's round finds nothing due.
          const claimed = yield* sql`
            UPDATE sandbox_subscriptions SET current_period_end = ${addMonth(sub.current_period_end)}
            WHERE id = ${sub.id} AND status = 'active' AND current_period_end <= ${at}
            RETURNING id`
          if (claimed.length === 0) return null
          const charged = yield* invoice(sub.id, "subscription_cycle", sub.amount_minor, sub.payment_method_id)
          if (!charged.paid) {
            yield* sql`
              UPDATE sandbox_subscriptions SET status = 'unpaid', ended_because = 'payment_failed',
                current_period_end = ${sub.current_period_end}
              WHERE id = ${sub.id}`
          }
          return charged
        })).pipe(Effect.orDie)
        if (renewed === null) continue
        events.push({
          eventId: `evt_sandbox_${renewed.id}`,
          type: renewed.paid ? "invoice.paid" : "invoice.payment_failed",
          kind: "invoice_changed",
          invoiceId: renewed.id,
          subscriptionId: sub.id
        })
      }
      return events
    })

    /** What the sandbox's portal page shows: the customer's subscriptions and invoices. */
    const portalPage = (sessionId: string) =>
      Effect.gen(function*() {
        const session = yield* sql<{ customer_id: string; return_url: string }>`
          SELECT customer_id, return_url FROM sandbox_portal_sessions WHERE id = ${sessionId}`.pipe(Effect.orDie)
        const found = session[0]
        if (found === undefined) return yield* new NotFound({ message: "No such sandbox portal session" })
        const subscriptions = yield* subscriptionRows.all(sql`
          ${selectSubscription} WHERE s.customer_id = ${found.customer_id} ORDER BY s.created_at DESC`).pipe(
          Effect.orDie
        )
        const invoices = yield* invoiceRows.all(sql`
          SELECT i.id, i.subscription_id, i.billing_reason, i.amount_minor, i.status, i.failure_message
          FROM sandbox_invoices i JOIN sandbox_subscriptions s ON s.id = i.subscription_id
          WHERE s.customer_id = ${found.customer_id} ORDER BY i.created_at DESC`).pipe(Effect.orDie)
        return { customerId: found.customer_id, returnUrl: found.return_url, subscriptions, invoices }
      })

    /** The portal's "replace card": the customer's live subscriptions are charged on the new card. */
    const replaceCard = (customerId: string, card: SandboxCard) =>
      sql`
        UPDATE sandbox_subscriptions SET payment_method_id = ${card.paymentMethodId}, card_brand = ${card.brand},
          card_last4 = ${card.last4}
        WHERE customer_id = ${customerId} AND status IN ('active', 'past_due')`.pipe(Effect.orDie, Effect.asVoid)

    return {
      provider: {
        planPrice,
        retrieveSubscription,
        changeSubscriptionPrice,
        cancelSubscription,
        retrieveInvoice,
        createPortal,
        retrieveDefaultCard,
        renewDue
      },
      subscribe,
      priceAmount,
      portalPage,
      replaceCard
    } as const
  })
}) {}
