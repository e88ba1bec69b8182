import { Effect, Schema } from "effect"
import { PaymentUnavailable } from "../../Errors/ApiErrors.js"
import type { CardDetails } from "./PaymentProvider.js"

/** Stripe's shapes that both the payment calls (StripeProvider.ts) and the plan calls (StripeSubscriptions.ts) read. */
export const Card = Schema.Struct({
  brand: Schema.String,
  last4: Schema.String,
  exp_month: Schema.Number,
  exp_year: Schema.Number
})

/** A reference Stripe answers as an id, or as the object when it was expanded. */
export const Id = Schema.Union(Schema.String, Schema.Struct({ id: Schema.String }))

export const idOf = (value: string | { readonly id: string } | null | undefined) =>
  value === null || value === undefined ? null : typeof value === "string" ? value : value.id

/** A payment method: its id, or the expanded object with its card. */
export const Method = Schema.NullOr(
  Schema.Union(Schema.String, Schema.Struct({ id: Schema.String, card: Schema.optional(Schema.NullOr(Card)) }))
)

export const cardDetails = (card: typeof Card.Type | null | undefined): CardDetails | null =>
  card === null || card === undefined
    ? null
    : { brand: card.brand, last4: card.last4, expMonth: card.exp_month, expYear: card.exp_year }

/** The card of a payment method that was expanded; none for a bare id. */
export const cardOf = (method: typeof Method.Type | undefined): CardDetails | null =>
  cardDetails(typeof method === "object" && method !== null ? method.card : null)

/** A Stripe answer decoded; one not shaped as expected is `payment_unavailable` (nothing was changed). */
export const decodeAnswer = <A, I>(schema: Schema.Schema<A, I>, what: string) => (raw: unknown) =>
  Schema.decodeUnknown(schema)(raw).pipe(
    Effect.mapError(() =>
      new PaymentUnavailable({ message: `The payment provider answered with something that is not ${what}` })
    )
  )
