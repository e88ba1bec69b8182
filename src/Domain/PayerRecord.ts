import { Schema } from "effect"
import { AnyJson } from "./Json.js"

/**
 * A keyless payer's signed record (x402, docs/x402-and-signatures.md): the call record or the
 * receipt, naming the payer's address instead of an org, with the payment and `signature`.
 */
export const PayerRecord = Schema.Record({ key: Schema.String, value: AnyJson }).annotations({
  identifier: "PayerRecord",
  description: "Present when paid with x402 without a key: the signed record naming the payer (`payer`), " +
    "with the payment's facts (`payment`) and the service's `signature`"
})
