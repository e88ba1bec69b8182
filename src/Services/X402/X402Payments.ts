import { decodePaymentSignatureHeader, encodePaymentRequiredHeader, encodePaymentResponseHeader } from "@x402/core/http"
import type { PaymentPayload, PaymentRequirements, SettleResponse } from "@x402/core/types"
import {
  declarePaymentIdentifierExtension,
  extractAndValidatePaymentIdentifier,
  PAYMENT_IDENTIFIER
} from "@x402/extensions/payment-identifier"
import { Clock, Duration, Effect, Exit, Fiber, FiberSet, Option, Schedule } from "effect"
import { randomUUID } from "node:crypto"
import {
  IdempotencyConflict,
  InvalidInput,
  PaymentInvalid,
  PaymentReplayed,
  RateLimited,
  RequestInProgress
} from "../../Errors/ApiErrors.js"
import { dayOf } from "../Ledger/Time.js"
import { Providers } from "../Providers/Providers.js"
import { RateLimiter } from "../RateLimiter/RateLimiter.js"
import { sha256OfJcs } from "../Receipts/Jcs.js"
import { RecordSigner } from "../Receipts/RecordSigner.js"
import { Facilitator, type PaymentScheme } from "./Facilitator.js"
import { X402Config } from "./X402Config.js"
import { type PaymentRow, type StoredAnswer, X402Repo } from "./X402Repo.js"

/**
 * A paid request from verification to settlement (docs/x402-and-signatures.md, "Taking
 * payments (x402)"):
 *
 * 1. the payment is read from `PAYMENT-SIGNATURE` and matched against the service's own
 *    requirements (scheme, network, asset, payee, amount): a mismatch is `payment_invalid`;
 * 2. a `payment-identifier` used before answers the first answer again (the same request,
 *    with the same authorisation or a new one the payer signed, which is verified and never
 *    settled) or `idempotency_conflict` (another request); this is looked up before the
 *    facilitator is asked, since a settled authorisation no longer verifies;
 * 3. `/verify`; then the payer's limits (requests a minute, the day's spend cap) and the
 *    payment's row, written once: a second use of the authorisation is `payment_replayed`;
 * 4. the work (the provider call, the purchase's items) runs in a fiber of the service, so a
 *    payer who goes away does not strand it; its outcome and answer are recorded before
 *    any settlement;
 * 5. `/settle` of what is due (a failed call: nothing, and the facilitator is not asked;
 *    `upto`: what passed, 0 allowed), then the row is settled.
 *
 * A crash between 4 and 5 leaves the row `due` with a lapsed lease: the sweeper settles it
 * while its authorisation is valid, or abandons it (X402Sweeper.ts).
 */
export interface WorkOutcome {
  /** Asset units to settle: the price of a succeeded call, the passed items of a purchase. */
  readonly dueUnits: bigint
  /** The answer, as the payer will get it (the signed record is added when it is read). */
  readonly answer: StoredAnswer
}

export interface PaidRequest {
  readonly kind: "call" | "purchase"
  readonly scheme: PaymentScheme
  /** The price in credits (a call's, or a purchase's maximum), and the same in asset units. */
  readonly priceCredits: bigint
  readonly units: bigint
  /** The endpoint id or tool slug, for the records. */
  readonly subject: string
  /** The request's decoded body: part of what makes two requests the same. */
  readonly request: unknown
  /** The `PAYMENT-SIGNATURE` header as sent. */
  readonly signature: string
  /** Runs the work once the payment is verified and written. */
  readonly work: (paymentId: string) => Effect.Effect<WorkOutcome>
}

/** A paid request's answer: status, body (with its signed record) and the settlement's header. */
export interface PaidAnswer {
  readonly status: number
  readonly body: unknown
  readonly paymentResponse: string | null
}

/** How long a repeat waits for the first request with its payment-identifier to finish. */
const REPEAT_WAIT = Schedule.spaced(Duration.millis(100)).pipe(Schedule.upTo(Duration.seconds(30)))

/** The payer named by a payment's authorisation (EIP-3009 or Permit2), as it claims it; checked by /verify. */
const claimedPayer = (payload: PaymentPayload): string | null => {
  const inner = payload.payload as Record<string, any>
  const from = inner?.["authorization"]?.from ?? inner?.["permit2Authorization"]?.from
  return typeof from === "string" ? from.toLowerCase() : null
}

/** When the authorisation stops being settleable (EIP-3009 `validBefore`, Permit2 `deadline`), in ms. */
const authorisationEnd = (payload: PaymentPayload): number | null => {
  const inner = payload.payload as Record<string, any>
  const end = inner?.["authorization"]?.validBefore ?? inner?.["permit2Authorization"]?.deadline
  return end === undefined || end === null || !/^\d+$/.test(String(end)) ? null : Number(end) * 1000
}

const sameAddress = (a: string, b: string) => a.toLowerCase() === b.toLowerCase()

export class X402Payments extends Effect.Service<X402Payments>()("X402/X402Payments", {
  dependencies: [X402Repo.Default, RecordSigner.Default, Providers.Default],
  scoped: Effect.gen(function*() {
    const config = yield* X402Config
    const facilitator = yield* Facilitator
    const repo = yield* X402Repo
    const limiter = yield* RateLimiter
    const signer = yield* RecordSigner
    // How long the work may take before the sweeper treats it as cut off: a call's provider
    // deadline twice over, a purchase's item with its retry, and a margin.
    const timeoutMs = (yield* Providers).timeoutMs
    const workLeaseMs = { call: 2 * timeoutMs + 30_000, purchase: 3 * timeoutMs + 30_000 }
    // A recorded outcome is settled at once; past the facilitator's deadline and a margin, the sweeper may take it.
    const settleLeaseMs = config.facilitatorTimeoutMs + 5_000
    // Work and settlement run here, not on the request's fiber (see the module comment).
    const running = yield* FiberSet.make<unknown, unknown>()
    const payerPolicy = { name: "x402-payer", limit: config.payerRequestsPerMinute, windowSeconds: 60 }

    const now = Effect.map(Clock.currentTimeMillis, (ms) => new Date(ms))

    /** `PAYMENT-REQUIRED` for a price: what to pay, where, and that a payment-identifier is taken. */
    const paymentRequired = (
      requirements: PaymentRequirements,
      resource: { readonly url: string; readonly description: string },
      error?: string
    ) =>
      encodePaymentRequiredHeader({
        x402Version: 2,
        ...(error === undefined ? {} : { error }),
        resource: { url: resource.url, description: resource.description, mimeType: "application/json" },
        accepts: [requirements],
        extensions: { [PAYMENT_IDENTIFIER]: declarePaymentIdentifierExtension(false) }
      })

    const requirementsFor = (scheme: PaymentScheme, units: bigint) => facilitator.requirements(scheme, units)

    /** The service's requirements against what the payment says it accepted: each field named when it differs. */
    const mismatch = (payload: PaymentPayload, required: PaymentRequirements): string | null => {
      const accepted = payload.accepted
      if (payload.x402Version !== 2) return `x402 version ${payload.x402Version} is not taken; pay with version 2`
      if (accepted === undefined || accepted === null) return "the payment names no accepted requirements"
      if (accepted.scheme !== required.scheme) return `scheme ${accepted.scheme}; this request takes ${required.scheme}`
      if (accepted.network !== required.network) {
        return `network ${accepted.network}; this service takes ${required.network}`
      }
      if (!sameAddress(accepted.asset, required.asset)) {
        return `asset ${accepted.asset}; this service takes ${required.asset}`
      }
      if (!sameAddress(accepted.payTo, required.payTo)) {
        return `payee ${accepted.payTo}; payments go to ${required.payTo}`
      }
      if (!/^\d+$/.test(String(accepted.amount)) || BigInt(accepted.amount) < BigInt(required.amount)) {
        return `amount ${accepted.amount} is below the price of ${required.amount} units`
      }
      if (BigInt(accepted.amount) !== BigInt(required.amount)) {
        return `amount ${accepted.amount}; this request takes exactly ${required.amount} units`
      }
      return null
    }

    const decode = (signature: string) =>
      Effect.try({
        try: () => decodePaymentSignatureHeader(signature),
        catch: () => new PaymentInvalid({ message: "PAYMENT-SIGNATURE is not a base64 JSON x402 payment payload" })
      })

    /** The answer a payment's row gives: its stored answer with the signed record, and its settlement. */
    const answerOf = (row: PaymentRow): Effect.Effect<PaidAnswer, PaymentInvalid> =>
      Effect.gen(function*() {
        if (row.status === "abandoned" || row.status === "refused" || row.answer === null) {
          return yield* new PaymentInvalid({
            message: `This payment was ${row.status} and nothing was settled: ${row.failure ?? "no outcome"}; ` +
              "sign a new payment"
          })
        }
        const settlement = row.settlement as SettleResponse | null
        // The call's or the purchase's record, as keyed callers' records name it, with the payer
        // in place of the org's agent and the payment's facts as they stand now.
        const record = {
          ...(row.answer.record as object),
          payer: row.payer,
          payment: {
            id: row.id,
            kind: row.kind,
            payer: row.payer,
            network: row.network,
            asset: row.asset,
            pay_to: row.pay_to,
            scheme: row.scheme,
            price_credits: row.price_credits.toString(),
            authorized_units: row.authorized_units.toString(),
            due_units: (row.due_units ?? 0n).toString(),
            settled_units: (row.settled_units ?? 0n).toString(),
            transaction: row.transaction,
            status: row.status,
            created_at: row.created_at.toISOString()
          }
        }
        const body = row.answer.body as Record<string, unknown>
        return {
          status: row.answer.status,
          body: { ...body, record: yield* signer.signed(record) },
          paymentResponse: settlement === null ? null : encodePaymentResponseHeader(settlement)
        }
      })

    /** Waits for a payment's first request to finish, then answers as it did. */
    const repeat = (row: PaymentRow) =>
      Effect.gen(function*() {
        const final = yield* repo.byId(row.id).pipe(
          Effect.flatMap((found) =>
            Option.isSome(found) && found.value.status !== "running" && found.value.status !== "due"
              ? Effect.succeed(found.value)
              : Effect.fail("unfinished" as const)
          ),
          Effect.retry(REPEAT_WAIT),
          Effect.orElseFail(() =>
            new RequestInProgress({
              message: "The first request with this payment-identifier is still running; retry shortly for its answer"
            })
          )
        )
        return yield* answerOf(final)
      })

    const conflict = () =>
      new IdempotencyConflict({
        message: "This payment-identifier was used with another request; use a new identifier"
      })

    /** Settles what is due and ends the row; a refusal ends it `refused`, no answer leaves it to the sweeper. */
    const settleDue = (row: PaymentRow) =>
      Effect.gen(function*() {
        const due = row.due_units ?? 0n
        // A failed exact payment settles nothing: the facilitator is not asked.
        if (row.scheme === "exact" && due === 0n) return row
        const payload = row.payment_payload as PaymentPayload
        const required = row.requirements as PaymentRequirements
        const settling = facilitator.settle(payload, required, due).pipe(
          Effect.tapError((error) =>
            error._tag === "payment_invalid"
              ? Effect.flatMap(now, (at) => repo.markUnsettled(row.id, "refused", error.message, at))
              : Effect.void
          )
        )
        // An `upto` payment with nothing due is closed with a settlement of 0; if that fails,
        // nothing is owed all the same, and the answer stands (without PAYMENT-RESPONSE).
        if (due === 0n) {
          const closed = yield* Effect.either(settling)
          if (closed._tag === "Left") {
            yield* Effect.logWarning(`x402 payment ${row.id}: closing with 0 failed: ${closed.left.message}`)
            return row
          }
          yield* repo.markSettled(row.id, 0n, closed.right, null, yield* now)
          return Option.getOrElse(yield* repo.byId(row.id), () => row)
        }
        const settled = yield* settling
        yield* repo.markSettled(
          row.id,
          settled.amount !== undefined && /^\d+$/.test(settled.amount) ? BigInt(settled.amount) : due,
          settled,
          settled.transaction === "" ? null : settled.transaction,
          yield* now
        )
        return Option.getOrElse(yield* repo.byId(row.id), () => row)
      })

    /** Runs a paid request (see the module comment). */
    const pay = (paid: PaidRequest) =>
      Effect.gen(function*() {
        const payload = yield* decode(paid.signature)
        const required = yield* requirementsFor(paid.scheme, paid.units)
        const problem = mismatch(payload, required)
        if (problem !== null) return yield* new PaymentInvalid({ message: `The payment does not fit: ${problem}` })

        const identifier = extractAndValidatePaymentIdentifier(payload)
        if (!identifier.validation.valid) {
          return yield* new InvalidInput({
            message: `payment-identifier: ${(identifier.validation.errors ?? ["invalid"]).join("; ")}`
          })
        }
        const fingerprint = sha256OfJcs({ kind: paid.kind, request: paid.request })
        const authorizationSha256 = sha256OfJcs(payload.payload)
        const claimed = claimedPayer(payload)
        if (identifier.id !== null && claimed !== null) {
          const used = yield* repo.byIdentifier(claimed, identifier.id)
          if (Option.isSome(used)) {
            if (used.value.fingerprint !== fingerprint) return yield* conflict()
            // A retry may carry a new authorisation (a client signs once per try): it must be
            // the payer's own, but it is not settled; the first payment's answer stands.
            if (used.value.authorization_sha256 !== authorizationSha256) {
              const { payer } = yield* facilitator.verify(payload, required)
              if (payer !== used.value.payer) return yield* conflict()
            }
            return yield* repeat(used.value)
          }
        }

        const { payer } = yield* facilitator.verify(payload, required)
        if (claimed !== null && claimed !== payer) {
          return yield* new PaymentInvalid({ message: "The payment's signer is not the address it pays from" })
        }
        const decision = yield* limiter.consume(payerPolicy, payer)
        if (!decision.allowed) {
          return yield* new RateLimited({
            message:
              `Too many paid requests from ${payer}: ${payerPolicy.limit} a minute; retry in ${decision.resetSeconds} s`
          })
        }

        const createdAt = yield* now
        const end = authorisationEnd(payload) ?? createdAt.getTime() + config.maxTimeoutSeconds * 1000
        const id = randomUUID()
        const refused = yield* repo.open(
          {
            id,
            kind: paid.kind,
            payer,
            paymentIdentifier: identifier.id,
            fingerprint,
            authorizationSha256,
            scheme: paid.scheme,
            network: required.network,
            asset: required.asset,
            payTo: required.payTo,
            subject: paid.subject,
            priceCredits: paid.priceCredits,
            authorizedUnits: paid.units,
            paymentPayload: payload,
            requirements: required,
            validUntil: new Date(end),
            createdAt,
            leaseUntil: new Date(createdAt.getTime() + workLeaseMs[paid.kind])
          },
          config.payerDailyCapUnits,
          new Date(`${dayOf(createdAt.getTime())}T00:00:00Z`)
        )
        if (Option.isSome(refused)) {
          const why = refused.value
          if (why._tag === "AuthorizationUsed") {
            return yield* new PaymentReplayed({
              message: "This payment authorisation was already used; sign a new one"
            })
          }
          return yield* why.row.fingerprint === fingerprint ? repeat(why.row) : Effect.fail(conflict())
        }

        const settleAndAnswer = Effect.gen(function*() {
          const outcome = yield* paid.work(id)
          const at = yield* now
          yield* repo.recordOutcome(id, {
            dueUnits: outcome.dueUnits,
            answer: outcome.answer,
            at,
            leaseUntil: new Date(at.getTime() + settleLeaseMs)
          })
          const recorded = yield* repo.byId(id).pipe(Effect.flatMap(Option.match({
            onNone: () => Effect.dieMessage(`x402 payment ${id} vanished`),
            onSome: Effect.succeed
          })))
          return yield* answerOf(yield* settleDue(recorded))
        }).pipe(
          // Work that died before its outcome was recorded ends its payment: nothing settled.
          Effect.onExit((exit) =>
            Exit.isFailure(exit)
              ? Effect.flatMap(
                now,
                (at) => repo.markUnsettled(id, "abandoned", "the work did not finish", at, ["running"])
              )
              : Effect.void
          )
        )
        return yield* Effect.flatMap(FiberSet.run(running, settleAndAnswer), Fiber.join)
      })

    return { pay, paymentRequired, requirementsFor, settleDue, answerOf } as const
  })
}) {}
