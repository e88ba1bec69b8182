import { Model } from "@effect/sql"
import { ParseResult, Schema, Struct } from "effect"
import { MinorUnitsFromDecimal } from "./Billing.js"
import { DayFromColumn } from "./FxRate.js"
import { OrgId, PaymentId, UserId } from "./Ids.js"
import { AmountFromCredits, CREDITS_PER_USD, creditsToUsd } from "./Money.js"
import { TimestampColumn, TimestampFromDate } from "./Timestamps.js"

export const PaymentPurpose = Schema.Literal("top_up", "auto_reload", "plan")
export type PaymentPurpose = typeof PaymentPurpose.Type
/** A payment's own state (`creating` until the provider has it); the wire's status is `PaymentWireStatus`. */
export const PaymentStatus = Schema.Literal("creating", "pending", "succeeded", "failed", "canceled")
export type PaymentStatus = typeof PaymentStatus.Type
export const PaymentProvider = Schema.Literal("stripe", "sandbox")
export const PaymentCurrency = Schema.Literal("usd", "inr")
export const DisputeStatus = Schema.Literal("open", "won", "lost")

const hidden = ["json", "jsonCreate", "jsonUpdate"] as const

/** Minor units or credits: bigint in the row, written as given. */
const minorUnits = (wireKey: string, description?: string) =>
  Model.Field({
    select: Schema.BigInt,
    insert: Schema.BigInt,
    update: Schema.BigInt,
    json: Schema.propertySignature(MinorUnitsFromDecimal(description)).pipe(Schema.fromKey(wireKey))
  })

/** Money that comes back after the payment is made (refunds, disputes): never inserted. */
const returnedMinor = (wireKey: string, description: string) =>
  Model.Field({
    select: Schema.BigInt,
    update: Schema.BigInt,
    json: Schema.propertySignature(MinorUnitsFromDecimal(description)).pipe(Schema.fromKey(wireKey))
  })

/** How a payment's amount in its own currency is written: three decimals in USD, two in INR. */
const inCurrency = (what: string) =>
  `${what}, in the payment's currency: three decimals in USD (as every USD amount), two in INR`

/**
 * A card payment, declared once: `Payment` decodes its row (money in minor units and credits
 * as bigint, timestamps as Dates), `Payment.insert` is a new one (its status `creating`).
 * What the provider answers later (its ids, the card, refunds, disputes) is written by
 * partial updates (`PaymentChanges` in BillingRepo). The json variant holds the wire's
 * fields that are the row's own (amounts as two-decimal text, credits as amount objects,
 * timestamps ISO 8601); `PaymentJson` adds those computed from several columns.
 */
export class Payment extends Model.Class<Payment>("Payment")({
  id: Model.GeneratedByApp(PaymentId),
  org_id: Model.FieldExcept(...hidden)(OrgId),
  purpose: PaymentPurpose,
  provider: PaymentProvider,
  provider_payment_id: Model.FieldExcept("insert", "jsonCreate", "jsonUpdate")(Schema.NullOr(Schema.String)),
  provider_idempotency_key: Model.FieldExcept(...hidden)(Schema.String),
  status: Model.FieldExcept(...hidden)(PaymentStatus),
  currency: PaymentCurrency,
  amount_minor: minorUnits("amount", inCurrency("Charged")),
  usd_cents: minorUnits("amount_usd", "The USD value, three decimals"),
  credits: Model.Field({
    select: Schema.BigInt,
    insert: Schema.BigInt,
    update: Schema.BigInt,
    json: AmountFromCredits
  }),
  /** INR per USD, as the decimal text the rate was published with. */
  fx_rate: Model.FieldExcept(...hidden)(Schema.NullOr(Schema.String)),
  /** The rate's day, `YYYY-MM-DD`. */
  fx_rate_date: Model.Field({ select: Schema.NullOr(DayFromColumn), insert: Schema.NullOr(Schema.String) }),
  plan: Schema.NullOr(Schema.Literal("pro", "max")),
  offer: Schema.NullOr(Schema.String),
  save_card: Schema.Boolean,
  /** Paid on the provider's hosted checkout page (the session's id once it is made). */
  checkout: Model.FieldExcept(...hidden)(Schema.Boolean),
  checkout_session_id: Model.FieldOnly("select", "update")(Schema.NullOr(Schema.String)),
  idempotency_key: Model.FieldExcept(...hidden)(Schema.NullOr(Schema.String)),
  fingerprint: Model.FieldExcept(...hidden)(Schema.NullOr(Schema.String)),
  failure_message: Model.FieldExcept("insert", "jsonCreate", "jsonUpdate")(Schema.NullOr(Schema.String)),
  receipt_url: Model.FieldExcept("insert", "jsonCreate", "jsonUpdate")(Schema.NullOr(Schema.String)),
  card_brand: Model.FieldOnly("select", "update")(Schema.NullOr(Schema.String)),
  card_last4: Model.FieldOnly("select", "update")(Schema.NullOr(Schema.String)),
  refunded_minor: returnedMinor("refunded", inCurrency("Refunded so far")),
  disputed_minor: returnedMinor("disputed", inCurrency("Disputed")),
  dispute_status: Model.FieldOnly("select", "update")(Schema.NullOr(DisputeStatus)),
  /** Credits the ledger has taken back for money returned (less any given back again). */
  reversed_credits: Model.Field({
    select: Schema.BigInt,
    update: Schema.BigInt,
    json: Schema.propertySignature(AmountFromCredits).pipe(Schema.fromKey("credits_taken_back"))
  }),
  credited_at: Model.Field({
    select: Schema.NullOr(Schema.DateFromSelf),
    update: Schema.NullOr(Schema.DateFromSelf),
    json: Schema.NullOr(TimestampFromDate)
  }),
  created_by: Model.FieldOnly("select", "insert")(Schema.NullOr(UserId)),
  created_at: TimestampColumn,
  updated_at: Model.FieldOnly("select", "insert", "update")(Schema.DateFromSelf)
}) {}

/** What the wire says of a payment: its state, with what was given back since. */
export const PaymentWireStatus = Schema.Literal(
  "pending",
  "succeeded",
  "failed",
  "canceled",
  "refunded",
  "partially_refunded",
  "disputed"
)

const wire = Payment.json.fields

/** The payment's own columns the wire shows (in `PaymentJson`, beside the computed fields). */
export const paymentWireColumns = Object.keys(wire) as ReadonlyArray<keyof typeof wire>

/**
 * The payment's fields: the row's own in their wire form (amounts as two-decimal text of
 * their minor units), and those computed from several columns (`status`; `fx` from the rate
 * and its day; `card` from brand and last four).
 */
const PaymentFields = Schema.Struct({
  ...Struct.pick(wire, "id", "purpose"),
  status: PaymentWireStatus,
  ...Struct.pick(wire, "currency", "amount_minor", "usd_cents", "credits"),
  fx: Schema.NullOr(Schema.Struct({
    source: Schema.Literal("ECB"),
    inr_per_usd: Schema.String,
    rate_date: Schema.String
  })),
  ...Struct.pick(wire, "plan", "offer", "save_card"),
  card: Schema.NullOr(Schema.Struct({ brand: Schema.String, last4: Schema.String })),
  ...Struct.pick(
    wire,
    "failure_message",
    "refunded_minor",
    "disputed_minor",
    "reversed_credits",
    "receipt_url",
    "provider",
    "provider_payment_id",
    "created_at",
    "credited_at"
  )
})

const WirePayment = Schema.encodedSchema(PaymentFields)
type WirePayment = typeof WirePayment.Type

/** Cents as USD text with the spec's three decimals ("25.00" -> "25.000"), through `creditsToUsd`. */
const threeDecimals = (cents: string) => creditsToUsd(BigInt(cents.replace(".", "")) * CREDITS_PER_USD / 100n)
/** Back to two decimals: a USD amount of a payment is whole cents, so its third decimal is 0. */
const twoDecimals = (usd: string) => /^(-?\d+\.\d{2})0$/.exec(usd)?.[1]

const usdFieldsOf = (payment: WirePayment) =>
  payment.currency === "usd" ? (["amount_usd", "amount", "refunded", "disputed"] as const) : (["amount_usd"] as const)

/**
 * The wire's payment. Its USD amounts are written as the specification writes USD, with
 * three decimals: `amount_usd` always, and `amount`, `refunded` and `disputed` when the
 * payment is in USD (in INR they stay rupees with two decimals).
 */
export const PaymentJson = Schema.transformOrFail(WirePayment, PaymentFields, {
  strict: true,
  decode: (wire, _, ast) => {
    const fields: Record<string, string> = {}
    for (const key of usdFieldsOf(wire)) {
      const two = twoDecimals(wire[key] ?? "")
      if (two === undefined) {
        return ParseResult.fail(
          new ParseResult.Type(ast, wire, `${key} must be USD with three decimals in whole cents`)
        )
      }
      fields[key] = two
    }
    return ParseResult.succeed({ ...wire, ...fields })
  },
  encode: (fields) =>
    ParseResult.succeed({
      ...fields,
      ...Object.fromEntries(usdFieldsOf(fields).map((key) => [key, threeDecimals(fields[key] ?? "")]))
    })
}).annotations({ identifier: "Payment" })
export type PaymentView = typeof PaymentJson.Type
