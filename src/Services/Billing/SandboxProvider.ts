import { SqlClient, type Statement } from "@effect/sql"
import { Clock, Effect, Layer, Option, Schema } from "effect"
import { randomBytes, randomUUID } from "node:crypto"
import { InvalidInput, NotFound } from "../../Errors/ApiErrors.js"
import { statementRows } from "../StatementRows.js"
import {
  PaymentProvider,
  type ProviderCheckout,
  type ProviderPayment,
  ProviderPaymentStatus
} from "./PaymentProvider.js"
import { type Behaviour, behaviourOf, declineMessages, sandboxTestCards } from "./SandboxCards.js"
import { SandboxSubscriptions } from "./SandboxSubscriptions.js"

/**
 * The development payment sandbox: a payment provider inside the service, behind the same
 * interface as Stripe, so a newcomer can top up on the embedded default without an
 * account. No money moves. Payments are rows of `sandbox_payment_intents`; a client
 * confirms one with its client secret and a test card (`SandboxPayments.confirm`, served
 * at `POST /v1/billing/sandbox/confirm`), as a browser would with Stripe.js.
 * The test cards are SandboxCards.ts's.
 */
export { sandboxTestCards } from "./SandboxCards.js"

/** A sandbox payment intent as its table keeps it (decoded: the amount as bigint). */
const SandboxRow = Schema.Struct({
  id: Schema.String,
  client_secret: Schema.String,
  amount_minor: Schema.BigInt,
  currency: Schema.String,
  status: ProviderPaymentStatus,
  customer_id: Schema.NullOr(Schema.String),
  payment_method_id: Schema.NullOr(Schema.String),
  card_brand: Schema.NullOr(Schema.String),
  card_last4: Schema.NullOr(Schema.String),
  card_exp_month: Schema.NullOr(Schema.Number),
  card_exp_year: Schema.NullOr(Schema.Number),
  save_card: Schema.Boolean,
  failure_message: Schema.NullOr(Schema.String),
  metadata: Schema.Struct({ payment_id: Schema.optional(Schema.String) })
})
type SandboxRow = typeof SandboxRow.Type

const toPayment = (row: SandboxRow): ProviderPayment => ({
  id: row.id,
  status: row.status,
  amountMinor: row.amount_minor,
  currency: row.currency,
  clientSecret: row.client_secret,
  customerId: row.customer_id,
  paymentMethodId: row.payment_method_id,
  card: row.card_brand === null || row.card_last4 === null
    ? null
    : {
      brand: row.card_brand,
      last4: row.card_last4,
      expMonth: row.card_exp_month ?? 0,
      expYear: row.card_exp_year ?? 0
    },
  receiptUrl: null,
  failureMessage: row.failure_message,
  needsAuthentication: row.status === "requires_action",
  ourPaymentId: typeof row.metadata?.payment_id === "string" ? row.metadata.payment_id : null
})

const SessionRow = Schema.Struct({
  id: Schema.String,
  mode: Schema.Literal("payment", "setup", "subscription"),
  price_id: Schema.NullOr(Schema.String),
  our_payment_id: Schema.NullOr(Schema.String),
  subscription_id: Schema.NullOr(Schema.String),
  payment_intent_id: Schema.NullOr(Schema.String),
  org_id: Schema.NullOr(Schema.String),
  customer_id: Schema.NullOr(Schema.String),
  payment_method_id: Schema.NullOr(Schema.String),
  card_brand: Schema.NullOr(Schema.String),
  card_last4: Schema.NullOr(Schema.String),
  failure_message: Schema.NullOr(Schema.String),
  url: Schema.String,
  success_url: Schema.String,
  cancel_url: Schema.String,
  status: Schema.Literal("open", "complete", "expired")
})
type SessionRow = typeof SessionRow.Type

/** Where the sandbox's own checkout page for a session is served. */
export const sandboxCheckoutPath = (sessionId: string) => `/v1/billing/sandbox/checkout/${sessionId}`

/**
 * A sandbox checkout session as the provider interface shows it: complete once its payment
 * succeeded (or its card was saved). A card setup is its own setup: its id names both.
 */
const toCheckout = (session: SessionRow, intent: SandboxRow | null): ProviderCheckout => {
  const done = intent === null ? session.status === "complete" : intent.status === "succeeded"
  const status = session.status === "expired" ? "expired" : done ? "complete" : "open"
  return {
    id: session.id,
    mode: session.mode,
    subscriptionId: session.subscription_id,
    status,
    url: status === "open" ? session.url : null,
    paymentId: intent?.id ?? null,
    ourPaymentId: session.our_payment_id ??
      (typeof intent?.metadata?.payment_id === "string" ? intent.metadata.payment_id : null),
    setupId: session.mode === "setup" && status === "complete" ? session.id : null,
    orgId: session.org_id
  }
}

/** What the sandbox's checkout page shows and where it sends the customer. */
export interface SandboxCheckoutPage {
  readonly checkout: ProviderCheckout
  /** What it charges; none for saving a card. */
  readonly amountMinor: bigint | null
  /** A plan's monthly fee rather than one payment. */
  readonly monthly: boolean
  readonly currency: string
  readonly failureMessage: string | null
  /** The success address with the session's id filled in. */
  readonly successUrl: string
  readonly cancelUrl: string
}

const columns =
  `id, client_secret, amount_minor, currency, status, customer_id, payment_method_id, card_brand, card_last4, card_exp_month,
  card_exp_year, save_card, failure_message, metadata`

export class SandboxPayments extends Effect.Service<SandboxPayments>()("Billing/SandboxPayments", {
  effect: Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const subscriptions = yield* SandboxSubscriptions
    const intentRows = statementRows(SandboxRow)
    const cols = sql.unsafe(columns)
    const now = Effect.map(Clock.currentTimeMillis, (ms) => new Date(ms))

    /** One sandbox payment intent, if the statement answers one. */
    const one = (statement: Statement.Statement<unknown>) =>
      intentRows.one(statement).pipe(
        Effect.orDie
      )

    const find = (id: string) => one(sql`SELECT ${cols} FROM sandbox_payment_intents WHERE id = ${id}`)

    const insert = (input: {
      readonly amountMinor: bigint
      readonly currency: string
      readonly customerId: string | null
      readonly saveCard: boolean
      readonly ourPaymentId: string
      readonly idempotencyKey: string
      readonly status: ProviderPaymentStatus
      readonly paymentMethodId: string | null
      readonly card: { readonly brand: string; readonly last4: string } | null
      readonly failureMessage: string | null
    }) =>
      Effect.gen(function*() {
        // The same idempotency key answers the payment it first made.
        const byKey = one(
          sql`SELECT ${cols} FROM sandbox_payment_intents WHERE idempotency_key = ${input.idempotencyKey}`
        )
        const existing = yield* byKey
        if (Option.isSome(existing)) return existing.value
        const id = `pi_sandbox_${randomUUID().replace(/-/g, "")}`
        const clientSecret = `${id}_secret_${randomBytes(16).toString("hex")}`
        const inserted = yield* one(sql`
          INSERT INTO sandbox_payment_intents (id, idempotency_key, client_secret, amount_minor, currency, status, customer_id,
            payment_method_id, card_brand, card_last4, card_exp_month, card_exp_year, save_card, failure_message, metadata, created_at)
          VALUES (${id}, ${input.idempotencyKey}, ${clientSecret}, ${input.amountMinor.toString()}, ${input.currency},
            ${input.status}, ${input.customerId}, ${input.paymentMethodId}, ${input.card?.brand ?? null},
            ${input.card?.last4 ?? null}, ${input.card === null ? null : 12}, ${input.card === null ? null : 2099},
            ${input.saveCard}, ${input.failureMessage}, ${
          JSON.stringify({ payment_id: input.ourPaymentId })
        }, ${yield* now})
          ON CONFLICT (idempotency_key) DO NOTHING
          RETURNING ${cols}`)
        if (Option.isSome(inserted)) return inserted.value
        // A concurrent request with the same key wrote it first.
        return Option.getOrThrow(yield* byKey)
      })

    const sessionRows = statementRows(SessionRow)
    const sessionCols = sql.unsafe(
      `id, mode, price_id, our_payment_id, subscription_id, payment_intent_id, org_id, customer_id, payment_method_id, card_brand, card_last4, failure_message, url,
      success_url, cancel_url, status`
    )
    const findSession = (id: string) =>
      sessionRows.one(sql`SELECT ${sessionCols} FROM sandbox_checkout_sessions WHERE id = ${id}`).pipe(Effect.orDie)

    /** A session with its payment intent, or a defect: the service only asks about sessions it made. */
    const sessionWithIntent = (id: string) =>
      Effect.gen(function*() {
        const session = yield* findSession(id)
        if (Option.isNone(session)) return yield* Effect.dieMessage(`No sandbox checkout ${id}`)
        if (session.value.payment_intent_id === null) return { session: session.value, intent: null }
        const intent = yield* find(session.value.payment_intent_id)
        if (Option.isNone(intent)) return yield* Effect.dieMessage(`No sandbox payment for checkout ${id}`)
        return { session: session.value, intent: intent.value }
      })

    const retrieveCheckout = (id: string) =>
      Effect.map(sessionWithIntent(id), ({ intent, session }) => toCheckout(session, intent))

    const createCheckout: PaymentProvider["Type"]["createCheckout"] = (request) =>
      Effect.gen(function*() {
        if (request.subscription !== null) {
          const session = yield* insertSession({
            ...request,
            mode: "subscription",
            paymentIntentId: null,
            orgId: request.subscription.orgId,
            priceId: request.subscription.priceId,
            ourPaymentId: request.ourPaymentId
          })
          return toCheckout(session, null)
        }
        const intent = yield* insert({
          amountMinor: request.amountMinor,
          currency: request.currency,
          customerId: request.customerId,
          saveCard: request.saveCard,
          ourPaymentId: request.ourPaymentId,
          idempotencyKey: `${request.idempotencyKey}:intent`,
          status: "requires_payment_method",
          paymentMethodId: null,
          card: null,
          failureMessage: null
        })
        const session = yield* insertSession({ ...request, mode: "payment", paymentIntentId: intent.id, orgId: null })
        return toCheckout(session, intent)
      })

    /** Writes a session (or finds the one its idempotency key made). */
    const insertSession = (request: {
      readonly mode: "payment" | "setup" | "subscription"
      readonly paymentIntentId: string | null
      readonly priceId?: string
      readonly ourPaymentId?: string
      readonly orgId: string | null
      readonly customerId: string | null
      readonly successUrl: string
      readonly cancelUrl: string
      readonly idempotencyKey: string
    }) =>
      Effect.gen(function*() {
        const id = `cs_sandbox_${randomUUID().replace(/-/g, "")}`
        // The page is served by this service, which is where the customer comes back to.
        const url = `${new URL(request.successUrl).origin}${sandboxCheckoutPath(id)}`
        yield* sql`
          INSERT INTO sandbox_checkout_sessions (id, idempotency_key, mode, payment_intent_id, price_id, our_payment_id,
            org_id, customer_id, url, success_url, cancel_url, status, created_at)
          VALUES (${id}, ${request.idempotencyKey}, ${request.mode}, ${request.paymentIntentId}, ${
          request.priceId ?? null
        },
            ${request.ourPaymentId ?? null}, ${request.orgId}, ${request.customerId}, ${url}, ${request.successUrl},
            ${request.cancelUrl}, 'open', ${yield* now})
          ON CONFLICT (idempotency_key) DO NOTHING`.pipe(Effect.orDie)
        // The same idempotency key answers the session it first made.
        const made = yield* sessionRows.one(
          sql`SELECT ${sessionCols} FROM sandbox_checkout_sessions WHERE idempotency_key = ${request.idempotencyKey}`
        ).pipe(Effect.orDie)
        return Option.getOrThrow(made)
      })

    const createCardSetup: PaymentProvider["Type"]["createCardSetup"] = (request) =>
      Effect.map(
        insertSession({ ...request, mode: "setup", paymentIntentId: null }),
        (session) => toCheckout(session, null)
      )

    const retrieveCardSetup = (id: string) =>
      Effect.map(sessionWithIntent(id), ({ session }) => ({
        succeeded: session.status === "complete",
        customerId: session.customer_id,
        paymentMethodId: session.payment_method_id,
        card: session.card_brand === null || session.card_last4 === null
          ? null
          : { brand: session.card_brand, last4: session.card_last4, expMonth: 12, expYear: 2099 }
      }))

    const provider = PaymentProvider.of({
      kind: "sandbox",
      publishableKey: null,
      createCustomer: () => Effect.succeed(`cus_sandbox_${randomUUID().replace(/-/g, "")}`),
      createPayment: (request) =>
        Effect.map(
          insert({
            amountMinor: request.amountMinor,
            currency: request.currency,
            customerId: request.customerId,
            saveCard: request.saveCard,
            ourPaymentId: request.ourPaymentId,
            idempotencyKey: request.idempotencyKey,
            status: "requires_payment_method",
            paymentMethodId: null,
            card: null,
            failureMessage: null
          }),
          toPayment
        ),
      createCheckout,
      retrieveCheckout,
      createCardSetup,
      retrieveCardSetup,
      expireCheckout: (id) =>
        Effect.gen(function*() {
          const { session } = yield* sessionWithIntent(id)
          if (session.payment_intent_id === null) {
            yield* sql`UPDATE sandbox_checkout_sessions SET status = 'expired' WHERE id = ${id} AND status = 'open'`
              .pipe(Effect.orDie)
            return yield* retrieveCheckout(id)
          }
          const intent = yield* provider.cancelPayment(session.payment_intent_id)
          // A payment that succeeded first keeps the session complete.
          if (intent.status === "canceled") {
            yield* sql`UPDATE sandbox_checkout_sessions SET status = 'expired' WHERE id = ${id}`.pipe(Effect.orDie)
          }
          return yield* retrieveCheckout(id)
        }),
      chargeOffSession: (request) =>
        Effect.gen(function*() {
          const behaviour = behaviourOf(request.paymentMethodId)
          const last4 = /_(\d{4})_[0-9a-f]+$/.exec(request.paymentMethodId)?.[1] ?? "0000"
          const row = yield* insert({
            amountMinor: request.amountMinor,
            currency: request.currency,
            customerId: request.customerId,
            saveCard: false,
            ourPaymentId: request.ourPaymentId,
            idempotencyKey: request.idempotencyKey,
            status: behaviour === "succeeds"
              ? "succeeded"
              : behaviour === "authentication_required"
              ? "requires_action"
              : "requires_payment_method",
            paymentMethodId: request.paymentMethodId,
            card: { brand: "visa", last4 },
            failureMessage: behaviour === "succeeds" ? null : declineMessages[behaviour]
          })
          return toPayment(row)
        }),
      retrievePayment: (id) =>
        Effect.flatMap(find(id), (row) =>
          Option.match(row, {
            onNone: () => Effect.dieMessage(`No sandbox payment ${id}`),
            onSome: (r) => Effect.succeed(toPayment(r))
          })),
      cancelPayment: (id) =>
        Effect.gen(function*() {
          const canceled = yield* one(sql`
            UPDATE sandbox_payment_intents SET status = 'canceled'
            WHERE id = ${id} AND status NOT IN ('succeeded', 'canceled')
            RETURNING ${cols}`)
          if (Option.isSome(canceled)) return toPayment(canceled.value)
          const row = yield* find(id)
          return Option.isSome(row) ? toPayment(row.value) : yield* Effect.dieMessage(`No sandbox payment ${id}`)
        }),
      // The sandbox has no webhooks: a confirmation settles the payment at once.
      verifyWebhook: () => Effect.dieMessage("The payment sandbox sends no webhooks"),
      ...subscriptions.provider
    })

    /**
     * Pays a sandbox payment with a test card, as a browser would with Stripe.js; answers
     * the provider's id of the payment (whatever the card did).
     */
    const confirm = (clientSecret: string, cardNumber: string) =>
      Effect.gen(function*() {
        const number = cardNumber.replace(/[\s-]/g, "")
        const card = sandboxTestCards[number as keyof typeof sandboxTestCards]
        if (card === undefined) {
          return yield* new InvalidInput({
            message: `Not a sandbox test card; use one of ${Object.keys(sandboxTestCards).join(", ")}`
          })
        }
        const id = clientSecret.split("_secret_")[0] ?? ""
        const intent = yield* one(sql`
          SELECT ${cols} FROM sandbox_payment_intents WHERE id = ${id} AND client_secret = ${clientSecret}`)
        if (Option.isNone(intent)) return yield* new NotFound({ message: "No sandbox payment with that client secret" })
        const succeeds = card.behaviour === "succeeds" || card.behaviour === "authentication_required"
        const last4 = number.slice(-4)
        const paymentMethodId = `pm_sandbox_${card.behaviour}_${last4}_${randomBytes(6).toString("hex")}`
        yield* sql`
          UPDATE sandbox_payment_intents SET
            status = ${succeeds ? "succeeded" : "requires_payment_method"},
            payment_method_id = ${paymentMethodId}, card_brand = ${card.brand}, card_last4 = ${last4},
            card_exp_month = 12, card_exp_year = 2099,
            failure_message = ${succeeds ? null : declineMessages[card.behaviour as Exclude<Behaviour, "succeeds">]}
          WHERE id = ${id} AND status IN ('requires_payment_method', 'requires_confirmation', 'requires_action')`.pipe(
          Effect.orDie
        )
        return id
      })

    /** A card setup on the sandbox page: a test card that is not declined is saved (for off-session charges). */
    /** A test card typed on a sandbox page, as the saved card it becomes (its behaviour in its id). */
    const testCard = (cardNumber: string) =>
      Effect.gen(function*() {
        const number = cardNumber.replace(/[\s-]/g, "")
        const card = sandboxTestCards[number as keyof typeof sandboxTestCards]
        if (card === undefined) {
          return yield* new InvalidInput({
            message: `Not a sandbox test card; use one of ${Object.keys(sandboxTestCards).join(", ")}`
          })
        }
        const last4 = number.slice(-4)
        return {
          paymentMethodId: `pm_sandbox_${card.behaviour}_${last4}_${randomBytes(6).toString("hex")}`,
          brand: card.brand,
          last4,
          behaviour: card.behaviour
        }
      })

    const saveCard = (sessionId: string, cardNumber: string) =>
      Effect.gen(function*() {
        const card = yield* testCard(cardNumber)
        if (card.behaviour === "declined" || card.behaviour === "insufficient_funds") {
          yield* sql`
            UPDATE sandbox_checkout_sessions SET failure_message = ${declineMessages[card.behaviour]}
            WHERE id = ${sessionId} AND status = 'open'`.pipe(Effect.orDie)
          return
        }
        yield* sql`
          UPDATE sandbox_checkout_sessions SET status = 'complete', payment_method_id = ${card.paymentMethodId},
            card_brand = ${card.brand}, card_last4 = ${card.last4}, failure_message = NULL
          WHERE id = ${sessionId} AND status = 'open'`.pipe(Effect.orDie)
      })

    /** The customer subscribes on the sandbox's page: the first month is charged on the test card. */
    const subscribe = (session: SessionRow, cardNumber: string) =>
      Effect.gen(function*() {
        const card = yield* testCard(cardNumber)
        const started = yield* subscriptions.subscribe({
          customerId: session.customer_id ?? "",
          orgId: session.org_id,
          ourPaymentId: session.our_payment_id,
          priceId: session.price_id ?? "",
          card
        })
        yield* sql`
          UPDATE sandbox_checkout_sessions SET
            status = ${started.subscriptionId === null ? "open" : "complete"},
            subscription_id = ${started.subscriptionId}, failure_message = ${started.failure},
            payment_method_id = ${card.paymentMethodId}, card_brand = ${card.brand}, card_last4 = ${card.last4}
          WHERE id = ${session.id} AND status = 'open'`.pipe(Effect.orDie)
      })

    /** What the sandbox's checkout page shows for a session; none for an unknown one. */
    const checkoutPage = (sessionId: string) =>
      Effect.gen(function*() {
        const session = yield* findSession(sessionId)
        if (Option.isNone(session)) return Option.none<SandboxCheckoutPage>()
        const { intent } = yield* sessionWithIntent(sessionId)
        return Option.some<SandboxCheckoutPage>({
          checkout: toCheckout(session.value, intent),
          amountMinor: intent?.amount_minor ??
            (session.value.price_id === null ? null : yield* subscriptions.priceAmount(session.value.price_id)),
          monthly: session.value.mode === "subscription",
          currency: intent?.currency ?? "usd",
          failureMessage: intent?.failure_message ?? session.value.failure_message,
          successUrl: session.value.success_url.replace("{CHECKOUT_SESSION_ID}", sessionId),
          cancelUrl: session.value.cancel_url
        })
      })

    /** The customer pays on the sandbox's checkout page with a test card; answers the page after it. */
    const payCheckout = (sessionId: string, cardNumber: string) =>
      Effect.gen(function*() {
        const { intent, session } = yield* sessionWithIntent(sessionId)
        if (session.status === "open" && intent !== null) yield* confirm(intent.client_secret, cardNumber)
        if (session.status === "open" && session.mode === "setup") yield* saveCard(session.id, cardNumber)
        if (session.status === "open" && session.mode === "subscription") yield* subscribe(session, cardNumber)
        return Option.getOrThrow(yield* checkoutPage(sessionId))
      })

    return { provider, confirm, checkoutPage, payCheckout, testCard } as const
  }),
  dependencies: [SandboxSubscriptions.Default]
}) {}

export const SandboxProviderLive = Layer.effect(PaymentProvider, Effect.map(SandboxPayments, (s) => s.provider))
