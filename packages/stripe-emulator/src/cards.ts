/**
 * Stripe's test cards as the emulator knows them: each card number typed on a hosted page
 * and the test payment method token that stands for it through the API (any expiry, any CVC).
 * - 4242 4242 4242 4242 (Visa), 5555 5555 5555 4444 (Mastercard): succeed;
 * - 4000 0000 0000 0002: declined; 4000 0000 0000 9995: declined, insufficient funds;
 * - 4000 0027 6000 3184: its holder confirms it with 3-D Secure on a hosted page; off-session
 *   it needs authentication, so the charge fails.
 */
export type Behaviour = "succeeds" | "declined" | "insufficient_funds" | "authentication_required"

export interface TestCard {
  readonly number: string
  readonly token: string
  readonly brand: string
  readonly behaviour: Behaviour
}

export const testCards: ReadonlyArray<TestCard> = [
  { number: "4242424242424242", token: "pm_card_visa", brand: "visa", behaviour: "succeeds" },
  { number: "5555555555554444", token: "pm_card_mastercard", brand: "mastercard", behaviour: "succeeds" },
  { number: "4000000000000002", token: "pm_card_chargeDeclined", brand: "visa", behaviour: "declined" },
  {
    number: "4000000000009995",
    token: "pm_card_chargeDeclinedInsufficientFunds",
    brand: "visa",
    behaviour: "insufficient_funds"
  },
  {
    number: "4000002760003184",
    token: "pm_card_authenticationRequired",
    brand: "visa",
    behaviour: "authentication_required"
  }
]

/** The test card of a number as typed (spaces and dashes allowed). */
export const cardByNumber = (typed: string) => testCards.find((card) => card.number === typed.replace(/[\s-]/g, ""))

export const cardByToken = (token: string) => testCards.find((card) => card.token === token)

/** Stripe's messages for a charge the card refuses. */
export const declineMessages: Record<Exclude<Behaviour, "succeeds">, string> = {
  declined: "Your card was declined.",
  insufficient_funds: "Your card has insufficient funds.",
  authentication_required: "Your card was declined. This transaction requires authentication."
}

/** Whether a charge on the card fails: off-session, a card that needs its holder fails too. */
export const refuses = (behaviour: Behaviour, offSession: boolean) =>
  behaviour === "declined" || behaviour === "insufficient_funds" ||
  (behaviour === "authentication_required" && offSession)
