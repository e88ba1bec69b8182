import { Either, Schema } from "effect"
import { describe, expect, it } from "vitest"
import { MinorUnitsFromDecimal } from "../../src/Domain/Billing.js"
import { OrgId, PaymentId } from "../../src/Domain/Ids.js"
import { Payment, PaymentJson } from "../../src/Domain/Payment.js"
import { paymentView } from "../../src/Services/Billing/PaymentRecords.js"

/** A refunded-in-part INR top-up paid with a card, as its row decodes. */
const row = Schema.decodeUnknownSync(Payment)({
  id: "5b1c3f2e-8a4d-4c6e-9f10-2a3b4c5d6e7f",
  org_id: "0f0e0d0c-0b0a-4909-8807-060504030201",
  purpose: "top_up",
  provider: "sandbox",
  provider_payment_id: "pi_1",
  provider_idempotency_key: "payment:x",
  status: "succeeded",
  currency: "inr",
  amount_minor: "211000",
  usd_cents: "2500",
  credits: "25000",
  fx_rate: "84.4000",
  fx_rate_date: new Date("2026-11-21T00:00:00.000Z"),
  plan: null,
  offer: null,
  save_card: true,
  checkout: false,
  checkout_session_id: null,
  idempotency_key: null,
  fingerprint: null,
  failure_message: null,
  receipt_url: null,
  card_brand: "visa",
  card_last4: "4242",
  refunded_minor: "5",
  disputed_minor: "0",
  dispute_status: null,
  reversed_credits: "1",
  credited_at: new Date("2026-11-21T10:00:01.500Z"),
  created_by: null,
  created_at: new Date("2026-11-21T10:00:00.000Z"),
  updated_at: new Date("2026-11-21T10:00:01.500Z")
})

const wire = {
  id: "5b1c3f2e-8a4d-4c6e-9f10-2a3b4c5d6e7f",
  purpose: "top_up",
  status: "partially_refunded",
  currency: "inr",
  amount: "2110.00",
  amount_usd: "25.000",
  credits: { credits: "25000", usd: "25.000" },
  fx: { source: "ECB", inr_per_usd: "84.4000", rate_date: "2026-11-21" },
  plan: null,
  offer: null,
  save_card: true,
  card: { brand: "visa", last4: "4242" },
  failure_message: null,
  refunded: "0.05",
  disputed: "0.00",
  credits_taken_back: { credits: "1", usd: "0.001" },
  receipt_url: null,
  provider: "sandbox",
  provider_payment_id: "pi_1",
  created_at: "2026-11-21T10:00:00.000Z",
  credited_at: "2026-11-21T10:00:01.500Z"
}

describe("a payment declared once", () => {
  it("is written on the wire field for field and in the wire's order, the org and the provider's key left out", () => {
    const encoded = Schema.encodeSync(PaymentJson)(paymentView(row))
    expect(JSON.stringify(encoded)).toBe(JSON.stringify(wire))
  })

  it("reads back from the wire as the record the service answered (what the dashboard's client sees)", () => {
    const decoded = Schema.decodeUnknownSync(PaymentJson)(wire)
    expect(decoded).toEqual(paymentView(row))
    expect(decoded.id).toBe(PaymentId.make(wire.id))
    expect(row.org_id).toBe(OrgId.make("0f0e0d0c-0b0a-4909-8807-060504030201"))
  })

  it("writes a USD payment's amounts as USD, with three decimals, and reads only whole cents back", () => {
    const usd = Payment.make({
      ...row,
      currency: "usd",
      amount_minor: 2500n,
      refunded_minor: 500n,
      disputed_minor: 1000n,
      fx_rate: null,
      fx_rate_date: null
    })
    const encoded = Schema.encodeSync(PaymentJson)(paymentView(usd))
    expect(encoded).toMatchObject({ amount: "25.000", amount_usd: "25.000", refunded: "5.000", disputed: "10.000" })
    expect(Schema.decodeUnknownSync(PaymentJson)(encoded)).toEqual(paymentView(usd))
    expect(Either.isLeft(Schema.decodeUnknownEither(PaymentJson)({ ...encoded, amount: "25.001" }))).toBe(true)
    expect(Either.isLeft(Schema.decodeUnknownEither(PaymentJson)({ ...encoded, amount_usd: "25.00" }))).toBe(true)
    // In INR only the USD value has three decimals; rupees keep their paise.
    expect(Schema.encodeSync(PaymentJson)(paymentView(row))).toMatchObject({ amount: "2110.00", amount_usd: "25.000" })
  })

  it("takes amounts in minor units as two-decimal text only", () => {
    const minor = MinorUnitsFromDecimal()
    expect(Schema.decodeUnknownSync(minor)("1234.50")).toBe(123450n)
    expect(Schema.encodeSync(minor)(5n)).toBe("0.05")
    expect(Either.isLeft(Schema.decodeUnknownEither(minor)("12.5"))).toBe(true)
    expect(Either.isLeft(Schema.decodeUnknownEither(minor)("12"))).toBe(true)
  })
})
